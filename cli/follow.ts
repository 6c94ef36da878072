// Following a run until it ends. On a terminal: one block redrawn in place (phase, counts by
// outcome, failed and running hosts first, the rest collapsed). Elsewhere: one plain line per
// change, so a log or CI shows the same story without escape codes.
//
// Progress comes from the run's event stream (Server-Sent Events, resumed with Last-Event-ID after a
// dropped connection); a keeper without it is polled instead. The final report is read once at the
// end: it is the single source of the outcome and its failures.
import type { Ctx } from './context';
import { CliError, ExitCode } from './errors';

const POLL_MS = 250;
const DONE = new Set(['ok', 'changed', 'failed', 'unknown', 'skipped']);

export interface RunReport {
  apply_id: string;
  incarnation: string;
  operation: string;
  status: 'running' | 'succeeded' | 'failed';
  phase: string;
  error: string | null;
  created_at?: string;
  finished_at?: string | null;
  render_errors: { file: string; line: number; col: number; rule: string; message: string }[] | null;
  hosts: {
    sid: string;
    status: string;
    reason: string | null;
    steps: {
      index: number;
      name: string | null;
      status: string;
      changed: boolean;
      output: string;
      /** Set when the step's changed_when overrode the module's answer. */
      changed_when?: string | null;
    }[];
  }[];
}

/** What the display knows of a run: from events, or from a polled report. */
export interface Progress {
  apply_id: string;
  incarnation: string;
  operation: string;
  status: string;
  phase: string;
  /** Hosts the render planned (0 until known). */
  planned: number;
  hosts: Map<string, { status: string; reason: string | null; steps: number; changed: number; failed?: number }>;
  /** How long the run took, from the report's created_at to finished_at (not how long we watched). */
  tookMs?: number;
}

export function fromReport(r: RunReport): Progress {
  return {
    apply_id: r.apply_id,
    incarnation: r.incarnation,
    operation: r.operation,
    status: r.status,
    phase: r.phase,
    planned: r.hosts.length,
    ...(r.created_at && r.finished_at ? { tookMs: Date.parse(r.finished_at) - Date.parse(r.created_at) } : {}),
    hosts: new Map(
      r.hosts.map((h) => [
        h.sid,
        {
          status: h.status,
          reason: h.reason,
          steps: h.steps.length,
          changed: h.steps.filter((s) => s.changed).length,
          failed: h.steps.filter((s) => s.status === 'failed' || s.status === 'unknown').length,
        },
      ]),
    ),
  };
}

function countLine(p: Progress): string {
  const c: Record<string, number> = { ok: 0, changed: 0, failed: 0, unknown: 0, skipped: 0 };
  let done = 0;
  for (const h of p.hosts.values())
    if (DONE.has(h.status)) {
      c[h.status] = (c[h.status] ?? 0) + 1;
      done++;
    }
  const total = Math.max(p.planned, p.hosts.size);
  return `hosts ${done}/${total} done: ${['changed', 'ok', 'failed', 'unknown', 'skipped'].map((k) => `${k} ${c[k] ?? 0}`).join(', ')}`;
}

/** The steps of the finished hosts: a host that failed after changing four steps is a failed host,
 *  but its four changes happened, and the count says so. */
export function stepLine(p: Progress): string {
  let steps = 0;
  let changed = 0;
  let failed = 0;
  let changedHosts = 0;
  for (const h of p.hosts.values()) {
    if (!DONE.has(h.status)) continue;
    steps += h.steps;
    changed += h.changed;
    failed += h.failed ?? 0;
    if (h.changed > 0) changedHosts++;
  }
  return `steps ${steps}: changed ${changed} (on ${changedHosts} host${changedHosts === 1 ? '' : 's'}), failed ${failed}`;
}

/** The terminal block: failures first, running hosts next, then as many finished ones as fit. */
export function block(p: Progress, elapsedMs: number, rows: number): string[] {
  const lines = [
    `run ${p.incarnation}/${p.operation} ${p.apply_id}  ${p.status === 'running' ? p.phase : p.status}  ${(elapsedMs / 1000).toFixed(1)}s`,
    countLine(p),
    stepLine(p),
  ];
  const order = (s: string) => (s === 'failed' || s === 'unknown' ? 0 : DONE.has(s) ? 2 : 1);
  const hosts = [...p.hosts.entries()].sort(
    ([a, x], [b, y]) => order(x.status) - order(y.status) || a.localeCompare(b),
  );
  const room = Math.max(3, rows - lines.length - 2);
  const width = Math.min(48, Math.max(0, ...hosts.map(([sid]) => sid.length)));
  for (const [sid, h] of hosts.slice(0, room)) {
    const what = DONE.has(h.status) ? `${h.steps} steps, ${h.changed} changed` : 'running';
    lines.push(`  ${sid.padEnd(width)}  ${h.status.padEnd(8)} ${what}${h.reason ? `  ${h.reason}` : ''}`);
  }
  if (hosts.length > room) lines.push(`  ... and ${hosts.length - room} more`);
  const waiting = Math.max(0, p.planned - p.hosts.size);
  if (waiting > 0 && hosts.length <= room) lines.push(`  ${waiting} more host${waiting === 1 ? '' : 's'} running`);
  return lines;
}

class Display {
  private drawn = 0;
  private lastPhase = '';
  private readonly seen = new Map<string, string>();
  private readonly started = Date.now();

  constructor(
    private readonly ctx: Ctx,
    private readonly tty: boolean,
    private readonly quiet: boolean,
  ) {}

  show(p: Progress): void {
    if (this.quiet) return;
    if (this.tty) {
      const lines = block(p, p.tookMs ?? Date.now() - this.started, process.stderr.rows ?? 24);
      // Move up over the previous block and clear it, then draw the new one.
      process.stderr.write((this.drawn > 0 ? `\x1b[${this.drawn}F\x1b[J` : '') + lines.join('\n') + '\n');
      this.drawn = lines.length;
      return;
    }
    if (p.phase !== this.lastPhase && p.status === 'running') {
      this.ctx.note(`run ${p.apply_id}: ${p.phase}`);
      this.lastPhase = p.phase;
    }
    for (const [sid, h] of p.hosts) {
      if (DONE.has(h.status) && this.seen.get(sid) !== h.status) {
        this.seen.set(sid, h.status);
        this.ctx.note(`host ${sid}: ${h.status}${h.reason ? ` (${h.reason})` : ''}`);
      }
    }
  }

  end(p: Progress): void {
    if (this.quiet) return;
    if (this.tty) {
      this.show(p);
      return;
    }
    this.ctx.note(
      `run ${p.apply_id}: ${p.status} after ${((p.tookMs ?? Date.now() - this.started) / 1000).toFixed(1)}s; ${countLine(p)}; ${stepLine(p)}`,
    );
  }
}

async function report(ctx: Ctx, name: string, applyId: string): Promise<RunReport> {
  return (await ctx.client().call('getRun', { params: { name, apply_id: applyId } })).body as RunReport;
}

async function followEvents(ctx: Ctx, name: string, applyId: string, display: Display): Promise<RunReport> {
  const p = fromReport(await report(ctx, name, applyId));
  display.show(p);
  let lastEventId: string | undefined;
  let drops = 0;
  for (;;) {
    const r = await ctx.client().events('streamRunEvents', { name, apply_id: applyId }, lastEventId, (e) => {
      const d = e.data as Record<string, any>;
      if (e.event === 'phase') p.phase = String(d['phase']);
      else if (e.event === 'render') {
        p.planned = Number(d['hosts']);
        p.phase = 'dispatching';
      } else if (e.event === 'host')
        p.hosts.set(String(d['sid']), {
          status: String(d['status']),
          reason: d['reason'] ?? null,
          steps: Number(d['steps']),
          changed: Number(d['changed']),
          failed: Number(d['failed'] ?? 0),
        });
      else if (e.event === 'end') {
        p.status = String(d['status']);
        return true;
      } else return false;
      display.show(p);
      return false;
    });
    if (r.done) break;
    // The stream ended early (the keeper restarted, a proxy cut it): continue after the last event.
    lastEventId = r.lastEventId;
    if (++drops > 30)
      throw new CliError(
        ExitCode.Server,
        `lost the event stream of run ${applyId} ${drops} times`,
        `read the report with: keeperctl incarnations run-report ${name} ${applyId}`,
      );
    await new Promise((res) => setTimeout(res, 1000));
  }
  const final = await report(ctx, name, applyId);
  display.end(fromReport(final));
  return final;
}

async function followPolling(
  ctx: Ctx,
  name: string,
  applyId: string,
  display: Display,
  timeoutMs?: number,
): Promise<RunReport> {
  const started = Date.now();
  for (;;) {
    const r = await report(ctx, name, applyId);
    if (r.status !== 'running') {
      display.end(fromReport(r));
      return r;
    }
    display.show(fromReport(r));
    if (timeoutMs !== undefined && Date.now() - started > timeoutMs) return r;
    await new Promise((res) => setTimeout(res, POLL_MS));
  }
}

/** Follows a run until it ends, showing progress; returns the final report. */
export async function followRun(
  ctx: Ctx,
  name: string,
  applyId: string,
  opts: { tty: boolean; quiet?: boolean; timeoutMs?: number },
): Promise<RunReport> {
  const display = new Display(ctx, opts.tty, opts.quiet ?? false);
  if (opts.timeoutMs === undefined && (await ctx.client().operation('streamRunEvents')))
    return followEvents(ctx, name, applyId, display);
  return followPolling(ctx, name, applyId, display, opts.timeoutMs);
}

/** Steps whose changed_when overrode the module's answer: the report says so, as the API does. */
export function changedWhenLines(r: RunReport): string[] {
  const out: string[] = [];
  for (const h of r.hosts)
    for (const s of h.steps)
      if (s.changed_when)
        out.push(
          `${h.sid} step ${s.index}${s.name ? ` (${s.name})` : ''}: ${s.changed ? 'changed' : 'not changed'} by changed_when \`${s.changed_when}\` (the module said ${s.changed ? 'unchanged' : 'changed'})`,
        );
  return out;
}

/** How much of a failed step's output the summary shows: its first line, then its last lines. */
const OUTPUT_LINES = 40;
const OUTPUT_LINE_CHARS = 400;

/** A failed step's output after its first line, indented under it: all of it up to OUTPUT_LINES
 *  (psql's `FATAL: ...` is often the last line), else its end, saying how much was cut. */
function outputTail(output: string, more: string): string[] {
  const rest = output.replace(/\s+$/, '').split('\n').slice(1);
  const cut = Math.max(0, rest.length - (OUTPUT_LINES - 1));
  return [
    ...(cut > 0 ? [`  ... ${cut} line${cut === 1 ? '' : 's'} cut (${more})`] : []),
    ...rest
      .slice(cut)
      .map((l) => `  ${l.length > OUTPUT_LINE_CHARS ? `${l.slice(0, OUTPUT_LINE_CHARS)}... (line cut)` : l}`),
  ];
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
    for (const s of bad)
      out.push(
        `${h.sid} step ${s.index}${s.name ? ` (${s.name})` : ''}: ${s.status}${s.output ? `: ${s.output.split('\n')[0]}` : ''}${h.reason ? ` [${h.reason}]` : ''}`,
        // The rest of the output (a failed_when verdict follows the module's answer there,
        // runs/activities/apply-host.ts): the cause is often not on the first line.
        ...outputTail(s.output, `all of it: keeperctl incarnations run-report ${r.incarnation} ${r.apply_id} -o json`),
      );
  }
  return out;
}
