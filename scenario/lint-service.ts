/**
 * soul-lint's view of a service: load it from a directory and return every
 * finding. The checks are the ones render runs first, so a service that
 * lints clean fails render only on values known at run time (inputs, host
 * facts, state).
 *
 * Each finding also carries where it ends (the rest of its source line,
 * without trailing blanks or comment) for SARIF regions, and whether an
 * inline comment suppressed it:
 *
 *   key: value   # soul-lint: ignore SL025 -- the vars come from input at run time
 *
 * on the finding's line or alone on the line above. The reason after `--` is
 * required: a suppression without one suppresses nothing and is itself a
 * finding (SL026).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeError, type RenderError } from './errors';
import { loadServiceFromDir } from './load/dir';
import { unguardedCommands } from './check/idempotence';

export const RULE_SUPPRESSION = 'SL026';

export interface Finding extends RenderError {
  severity: 'error' | 'warning';
  endLine: number;
  endCol: number;
  /** Set when an inline `# soul-lint: ignore` comment with a reason covers this finding. */
  suppressed?: { reason: string };
}

const SUPPRESS = /#\s*soul-lint:\s*ignore\s+([A-Z]{2}\d{3}(?:\s*,\s*[A-Z]{2}\d{3})*)\s*(?:--\s*(.*?))?\s*$/;

interface Suppression {
  rules: string[];
  reason: string;
  line: number;
  col: number;
  ownLine: boolean;
}

function readLines(dir: string, file: string, cache: Map<string, string[] | null>): string[] | null {
  if (!cache.has(file)) {
    try {
      cache.set(file, fs.readFileSync(path.join(dir, file), 'utf8').split('\n'));
    } catch {
      cache.set(file, null);
    }
  }
  return cache.get(file)!;
}

function suppressionsOf(lines: string[]): Map<number, Suppression> {
  const out = new Map<number, Suppression>();
  lines.forEach((text, i) => {
    const m = SUPPRESS.exec(text);
    if (!m) return;
    out.set(i + 1, {
      rules: m[1]!.split(',').map((r) => r.trim()),
      reason: (m[2] ?? '').trim(),
      line: i + 1,
      col: m.index + 1,
      ownLine: text.slice(0, m.index).trim() === '',
    });
  });
  return out;
}

/** The end of the finding's source line: the last character before trailing blanks or a comment. */
function endOf(lines: string[] | null, line: number, col: number): { endLine: number; endCol: number } {
  const text = lines?.[line - 1];
  if (text === undefined) return { endLine: line, endCol: col + 1 };
  const hash = text.indexOf(' #', col - 1);
  const body = (hash >= 0 ? text.slice(0, hash) : text).replace(/\s+$/, '');
  return { endLine: line, endCol: Math.max(col + 1, body.length + 1) };
}

export function lintService(dir: string): Finding[] {
  const service = loadServiceFromDir(dir);
  // Errors fail render too; warnings are soul-lint's only (scenario/check/idempotence.ts).
  const all = [
    ...service.errors.map((e) => ({ e, severity: 'error' as const })),
    ...unguardedCommands(service).map((e) => ({ e, severity: 'warning' as const })),
  ];
  const cache = new Map<string, string[] | null>();
  const out: Finding[] = [];
  const unreasoned = new Set<string>();
  for (const { e, severity } of all) {
    const lines = readLines(dir, e.file, cache);
    const finding: Finding = { ...e, severity, ...endOf(lines, e.line, e.col) };
    if (lines && /\.ya?ml$/.test(e.file)) {
      const sup = suppressionsOf(lines);
      const here = sup.get(e.line);
      const above = sup.get(e.line - 1);
      const s = [here, above?.ownLine ? above : undefined].find((x) => x?.rules.includes(e.rule));
      if (s && s.reason) finding.suppressed = { reason: s.reason };
      else if (s) unreasoned.add(`${e.file}\n${s.line}\n${s.col}`);
    }
    out.push(finding);
  }
  for (const key of unreasoned) {
    const [file, line, col] = key.split('\n') as [string, string, string];
    const e = makeError(
      { file, line: Number(line), col: Number(col) },
      RULE_SUPPRESSION,
      'a soul-lint suppression needs a reason; this one suppresses nothing',
      'write the reason after `--`: # soul-lint: ignore SL0xx -- why this is fine',
    );
    out.push({ ...e, severity: 'error', endLine: Number(line), endCol: Number(col) + 1 });
  }
  return out;
}
