// One JSON line per event on stderr. Fields are passed explicitly so a secret can only reach a log
// line if a caller names it; `redact` is applied to every field whose name looks secret anyway.
// Under systemd each line starts with its syslog priority, so the journal files it at its level.
import { journalPrefix } from './journal';
import type { Level } from './log-level';

export type { Level } from './log-level';

const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const SECRET_FIELD = /(token|password|secret|signing_key|dsn|private_key|authorization)/i;

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

export function redact(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    if (SECRET_FIELD.test(k)) out[k] = '[redacted]';
    else if (v instanceof Error) out[k] = v.message;
    else out[k] = v;
  }
  return out;
}

export function createLogger(
  opts: { level?: Level; base?: Record<string, unknown>; write?: (line: string) => void } = {},
): Logger {
  const min = ORDER[opts.level ?? 'info'];
  const write = opts.write;
  const base = opts.base ?? {};
  const emit = (level: Level, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[level] < min) return;
    const line = JSON.stringify({ time: new Date().toISOString(), level, msg, ...redact({ ...base, ...fields }) });
    if (write) write(line);
    else process.stderr.write(`${journalPrefix(level)}${line}\n`);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger({ ...opts, base: { ...base, ...fields } }),
  };
}

/** A logger that discards everything, for tests and quiet CLIs. */
export const silentLogger: Logger = createLogger({ write: () => undefined });
