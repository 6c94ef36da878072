// Which keeper this soul is on (issue 37 row 17): `soul run` records its connection in a small file
// beside its identity (<paths.seed>/status.json) at every Welcome, lost stream and stop, and
// `soul status` reads it with the identity and the ledger's size. A file rather than a socket or the
// metrics listener: it needs nothing switched on, works while the soul is down (it then says since
// when and why), and holds no secret (kid, endpoint, session id and times only).
import fs from 'node:fs';
import path from 'node:path';
import { X509Certificate } from 'node:crypto';
import { SEED_FILES } from './identity';
import { ledgerUsage } from './ledger/usage';

export const STATUS_FILE = 'status.json';

export interface SoulStatus {
  state: 'connected' | 'disconnected' | 'stopped';
  /** The keeper of the current (connected) or last (disconnected, stopped) stream. */
  kid?: string;
  endpoint?: string;
  session_id?: string;
  /** When the state began (ISO 8601). */
  since: string;
  /** Why the stream ended, for disconnected. */
  reason?: string;
  /** The `soul run` process that wrote it. */
  pid: number;
}

/** Writes the status atomically (a reader never sees half a file); a failure only costs the status. */
export function writeStatus(seed: string, status: SoulStatus): void {
  const file = path.join(seed, STATUS_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(tmp, `${JSON.stringify(status)}\n`, { mode: 0o644 });
    fs.renameSync(tmp, file);
  } catch {
    fs.rmSync(tmp, { force: true });
  }
}

export function readStatus(seed: string): SoulStatus | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(seed, STATUS_FILE), 'utf8')) as SoulStatus;
  } catch {
    return undefined;
  }
}

/** Whether a process with this pid is alive (a soul killed with SIGKILL cannot write "stopped"). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface StatusReport {
  lines: string[];
  /** 0 connected, 1 anything else (not running, not connected, not onboarded). */
  code: number;
}

/** What `soul status` prints: one `key: value` line each, easy to read and to grep. */
export async function statusReport(o: { sid: string; seed: string; now?: Date }): Promise<StatusReport> {
  const lines = [`sid: ${o.sid}`];
  let code = 1;
  const certFile = path.join(o.seed, SEED_FILES.cert);
  if (!fs.existsSync(certFile)) {
    lines.push(`identity: none under ${o.seed} (run soul init first)`);
  } else {
    const cert = new X509Certificate(fs.readFileSync(certFile));
    lines.push(
      `certificate: serial ${cert.serialNumber.toLowerCase()}, valid until ${new Date(cert.validTo).toISOString()}`,
    );
  }
  const s = readStatus(o.seed);
  if (s === undefined) {
    lines.push('state: never connected (no soul run has reached a keeper with this identity yet)');
  } else {
    const running = alive(s.pid);
    const state = s.state !== 'stopped' && !running ? 'stopped' : s.state;
    if (state === 'connected') code = 0;
    const why = state === 'stopped' && s.state !== 'stopped' ? ' (soul run is not running)' : '';
    lines.push(`state: ${state}${why}`);
    lines.push(`since: ${s.since} (${ago(new Date(s.since), o.now ?? new Date())})`);
    if (s.kid !== undefined) lines.push(`${state === 'connected' ? 'keeper' : 'last keeper'}: ${s.kid}`);
    if (s.endpoint !== undefined) lines.push(`endpoint: ${s.endpoint}`);
    if (s.session_id !== undefined && state === 'connected') lines.push(`session: ${s.session_id}`);
    if (s.reason !== undefined && state !== 'connected') lines.push(`reason: ${s.reason}`);
    if (running) lines.push(`pid: ${s.pid}`);
  }
  const usage = await ledgerUsage(path.join(o.seed, 'ledger'));
  lines.push(`ledger: ${usage.files} journals, ${usage.bytes} bytes`);
  return { lines, code };
}

function ago(then: Date, now: Date): string {
  const s = Math.max(0, Math.round((now.getTime() - then.getTime()) / 1000));
  if (s < 120) return `${s} s ago`;
  if (s < 7200) return `${Math.round(s / 60)} min ago`;
  if (s < 172800) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} days ago`;
}
