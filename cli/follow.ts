// Following a run until it ends. On a terminal: one block redrawn in place (phase, counts by
// outcome, failed and running hosts first, the rest collapsed). Elsewhere: one plain line per
// change, so a log or CI shows the same story without escape codes.
// The keeper's run report is read every POLL_MS; the report is the single source of the outcome.
import type { Ctx } from './context';

const POLL_MS = 250;
const DONE = new Set(['ok', 'changed', 'failed', 'unknown', 'skipped']);

export interface RunReport {
  apply_id: string; incarnation: string; operation: string; status: 'running' | 'succeeded' | 'failed'; phase: string;
  error: string | null; render_errors: { file: string; line: number; col: number; rule: string; message: string }[] | null;
  hosts: { sid: string; status: string; reason: string | null; steps: { index: number; name: string | null; status: string; changed: boolean; output: string }[] }[];
}

function counts(r: RunReport): Record<string, number> {
  const c: Record<string, number> = { ok: 0, changed: 0, failed: 0, unknown: 0, skipped: 0, pending: 0 };
  for (const h of r.hosts) c[h.status] = (c[h.status] ?? 0) + 1;
  return c;
}

function countLine(r: RunReport): string {
  const c = counts(r);
  const done = r.hosts.filter((h) => DONE.has(h.status)).length;
  return `hosts ${done}/${r.hosts.length} done: ${['changed', 'ok', 'failed', 'unknown', 'skipped'].map((k) => `${k} ${c[k] ?? 0}`).join(', ')}`;
}

function hostLine(h: RunReport['hosts'][number], width: number): string {
  const changed = h.steps.filter((s) => s.changed).length;
  const ran = h.steps.filter((s) => DONE.has(s.status)).length;
  const what = DONE.has(h.status) ? `${h.steps.length} steps, ${changed} changed` : `step ${Math.min(ran + 1, h.steps.length)}/${h.steps.length}`;
  const reason = h.reason ? `  ${h.reason}` : '';
  return `  ${h.sid.padEnd(width)}  ${h.status.padEnd(8)} ${what}${reason}`;
}

/** The terminal block: failures and running hosts first, then as many of the rest as fit. */
export function block(r: RunReport, elapsedMs: number, rows: number): string[] {
  const lines = [`run ${r.incarnation}/${r.operation} ${r.apply_id}  ${r.status === 'running' ? r.phase : r.status}  ${(elapsedMs / 1000).toFixed(1)}s`, countLine(r)];
  const order = (s: string) => (s === 'failed' || s === 'unknown' ? 0 : DONE.has(s) ? 2 : 1);
  const hosts = [...r.hosts].sort((a, b) => order(a.status) - order(b.status) || a.sid.localeCompare(b.sid));
  const room = Math.max(3, rows - lines.length - 2);
  const width = Math.min(48, Math.max(0, ...hosts.map((h) => h.sid.length)));
  for (const h of hosts.slice(0, room)) lines.push(hostLine(h, width));
  if (hosts.length > room) lines.push(`  ... and ${hosts.length - room} more`);
  return lines;
}

/** Polls the run report until the run ends; shows progress; returns the final report. */
export async function followRun(ctx: Ctx, name: string, applyId: string, opts: { tty: boolean; quiet?: boolean; timeoutMs?: number }): Promise<RunReport> {
  const started = Date.now();
  let drawn = 0;
  let lastPhase = '';
  const seen = new Map<string, string>();
  for (;;) {
    const r = (await ctx.client().call('getRun', { params: { name, apply_id: applyId } })).body as RunReport;
    if (!opts.quiet) {
      if (opts.tty) {
        const lines = block(r, Date.now() - started, process.stderr.rows ?? 24);
        // Move up over the previous block and clear it, then draw the new one.
        process.stderr.write((drawn > 0 ? `\x1b[${drawn}F\x1b[J` : '') + lines.join('\n') + '\n');
        drawn = lines.length;
      } else {
        if (r.phase !== lastPhase && r.status === 'running') { ctx.note(`run ${applyId}: ${r.phase}`); lastPhase = r.phase; }
        for (const h of r.hosts) {
          if (DONE.has(h.status) && seen.get(h.sid) !== h.status) {
            seen.set(h.sid, h.status);
            ctx.note(`host ${h.sid}: ${h.status}${h.reason ? ` (${h.reason})` : ''}`);
          }
        }
      }
    }
    if (r.status !== 'running') {
      if (!opts.quiet && !opts.tty) ctx.note(`run ${applyId}: ${r.status} after ${((Date.now() - started) / 1000).toFixed(1)}s; ${countLine(r)}`);
      return r;
    }
    if (opts.timeoutMs !== undefined && Date.now() - started > opts.timeoutMs) return r;
    await new Promise((res) => setTimeout(res, POLL_MS));
  }
}

/** The failures of a run as lines: render errors with file:line:col, else host, step and reason. */
export function failureLines(r: RunReport): string[] {
  const out: string[] = [];
  if (r.error) out.push(`error: ${r.error}`);
  for (const e of r.render_errors ?? []) out.push(`${e.file}:${e.line}:${e.col} ${e.rule}: ${e.message}`);
  for (const h of r.hosts) {
    if (h.status !== 'failed' && h.status !== 'unknown') continue;
    const bad = h.steps.filter((s) => s.status === 'failed' || s.status === 'unknown');
    if (bad.length === 0) out.push(`${h.sid}: ${h.status}${h.reason ? `: ${h.reason}` : ''}`);
    for (const s of bad) out.push(`${h.sid} step ${s.index}${s.name ? ` (${s.name})` : ''}: ${s.status}${s.output ? `: ${s.output.split('\n')[0]}` : ''}${h.reason ? ` [${h.reason}]` : ''}`);
  }
  return out;
}
