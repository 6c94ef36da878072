// A run report built for fleets: the outcome and counts first, failed and unknown hosts expanded
// with their steps, every other outcome collapsed into one group that renders its hosts only when
// opened, so a run of thousands of hosts stays fast. A running run is followed through its event
// stream (no polling): each finished host updates in place, a wait at a gate between batches shows
// (with Approve, ui/app/src/views/run-waiting.tsx) until it ends, and the end loads the final report.
// A run that applied a plan links to it; a host refused because it drifted since the plan is marked
// as such (nothing was applied there), and each step shows its diff when the keeper recorded one.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, enc, followEvents } from '../api';
import { Busy, ErrorBox, Link, StatusBadge } from '../components';
import { StepDiff } from '../step-diff';
import { planHref } from './plan';
import { type RunWaiting, RunWaitingBox } from './run-waiting';

export interface RunStep {
  index?: number;
  step_index?: number;
  name: string | null;
  module: string;
  status: string;
  changed: boolean;
  output: string;
  /** Why the step did not run; `drift`: its host no longer matched the applied plan. */
  skip_reason?: string | null;
  /** The changed_when that overrode the module's answer (the module said the opposite of `changed`). */
  changed_when?: string | null;
  diff?: unknown;
}
export interface RunHost {
  sid: string;
  status: string;
  reason?: string | null;
  steps: RunStep[];
}
export interface RunReport {
  apply_id: string;
  operation: string;
  status: string;
  phase?: string;
  error?: string | null;
  render_errors?: unknown;
  hosts: RunHost[];
  temporal_ui?: string | null;
  created_at?: string;
  finished_at?: string | null;
  /** The plan this run applied, when it applied one. */
  plan_id?: string | null;
  /** What a running run waits for at a gate between batches; null when it does not wait. */
  waiting?: RunWaiting | null;
}

/** The keeper refused this host: it no longer matched the plan, so none of its steps was sent. */
export function driftRefused(host: RunHost): boolean {
  return (host.reason ?? '').startsWith('drift since plan') || host.steps.some((s) => s.skip_reason === 'drift');
}

/** What an operator reads first: a step that changed something is `changed`, not just `ok`. */
function stepOutcome(s: RunStep): string {
  return s.status === 'ok' && s.changed ? 'changed' : s.status;
}

const ORDER = ['failed', 'unknown', 'pending', 'changed', 'ok', 'skipped'];
const EXPANDED = new Set(['failed', 'unknown']);

function Steps({ host }: { host: RunHost }) {
  if (host.steps.length === 0) return <p class="muted">{host.reason ?? 'no steps'}</p>;
  return (
    <table class="grid steps">
      <thead>
        <tr>
          <th>#</th>
          <th>Step</th>
          <th>Module</th>
          <th>Result</th>
          <th>Output</th>
        </tr>
      </thead>
      <tbody>
        {host.steps.map((s, i) => (
          <tr key={i}>
            <td>{s.index ?? s.step_index ?? i}</td>
            <td>{s.name ?? ''}</td>
            <td>
              <code>{s.module}</code>
            </td>
            <td>
              <StatusBadge status={stepOutcome(s)} />
              {s.skip_reason ? (
                <span class="muted">
                  {' '}
                  ({s.skip_reason === 'drift' ? 'host drifted since the plan' : s.skip_reason})
                </span>
              ) : (
                ''
              )}
              {s.changed_when ? (
                <span class="muted" data-testid="changed-when">
                  {' '}
                  (changed_when <code>{s.changed_when}</code>: the module said {s.changed ? 'unchanged' : 'changed'})
                </span>
              ) : (
                ''
              )}
            </td>
            <td>
              {s.output ? (
                <details>
                  <summary>output</summary>
                  <pre>{s.output}</pre>
                </details>
              ) : (
                ''
              )}
              {s.diff != null && (
                <details>
                  <summary>changes</summary>
                  <StepDiff diff={s.diff} />
                </details>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function HostEntry({ host, open }: { host: RunHost; open: boolean }) {
  const [shown, setShown] = useState(open);
  const changed = host.steps.filter((s) => s.changed).length;
  const refused = driftRefused(host);
  return (
    <details
      class={`run-host${refused ? ' drift-refused' : ''}`}
      data-sid={host.sid}
      data-drift-refused={refused ? 'true' : undefined}
      open={open}
      onToggle={(e) => setShown((e.target as HTMLDetailsElement).open)}
    >
      <summary>
        {host.sid} <StatusBadge status={host.status} />
        {refused && (
          <>
            {' '}
            <span class="badge drift drift-drifted">drifted since the plan: nothing applied</span>
          </>
        )}{' '}
        <span class="muted">
          {host.steps.length} steps, {changed} changed{host.reason ? ` · ${host.reason}` : ''}
        </span>
      </summary>
      {shown && <Steps host={host} />}
    </details>
  );
}

/** One outcome: expanded for failures, else a collapsed group that renders its hosts when opened. */
function OutcomeGroup({ status, hosts }: { status: string; hosts: RunHost[] }) {
  const expanded = EXPANDED.has(status);
  const [open, setOpen] = useState(expanded);
  return (
    <details
      class="outcome-group"
      data-outcome={status}
      open={expanded}
      onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}
    >
      <summary>
        <StatusBadge status={status} /> {hosts.length} host{hosts.length === 1 ? '' : 's'}
      </summary>
      {open && hosts.map((h) => <HostEntry key={h.sid} host={h} open={expanded} />)}
    </details>
  );
}

export function RunReportView({ incarnation, applyId }: { incarnation: string; applyId: string }) {
  const path = `/v1/incarnations/${enc(incarnation)}/runs/${enc(applyId)}`;
  const [report, setReport] = useState<RunReport>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    const ac = new AbortController();
    const load = async () => {
      try {
        const first = await api<RunReport>('GET', path);
        if (ac.signal.aborted) return;
        setReport(first);
        if (first.status !== 'running') return;
        await followEvents(
          `${path}/events`,
          (e) => {
            if (e.event === 'phase') setReport((r) => (r ? { ...r, phase: e.data.phase } : r));
            if (e.event === 'waiting') setReport((r) => (r ? { ...r, waiting: e.data.waiting } : r));
            if (e.event === 'host') {
              setReport((r) => {
                if (!r) return r;
                const hosts = r.hosts.some((h) => h.sid === e.data.sid)
                  ? r.hosts.map((h) =>
                      h.sid === e.data.sid ? { ...h, status: e.data.status, reason: e.data.reason } : h,
                    )
                  : [...r.hosts, { sid: e.data.sid, status: e.data.status, reason: e.data.reason, steps: [] }];
                return { ...r, hosts };
              });
            }
            return e.event === 'end';
          },
          ac.signal,
        );
        if (!ac.signal.aborted) setReport(await api<RunReport>('GET', path));
      } catch (err) {
        if (!ac.signal.aborted) setError(err);
      }
    };
    void load();
    return () => ac.abort();
  }, [path]);

  const groups = useMemo(() => {
    const by = new Map<string, RunHost[]>();
    for (const h of report?.hosts ?? []) (by.get(h.status) ?? by.set(h.status, []).get(h.status)!).push(h);
    return [...by.entries()].sort(([a], [b]) => (ORDER.indexOf(a) + 1 || 99) - (ORDER.indexOf(b) + 1 || 99));
  }, [report]);

  const r = report;
  const refusedCount = r?.hosts.filter(driftRefused).length ?? 0;
  return (
    <section class="run-report" aria-label={`Run ${applyId}`}>
      <h3>
        Run <code>{applyId}</code>
      </h3>
      <ErrorBox error={error} />
      {!r && !error && <Busy busy label="Loading the run report…" />}
      {r && (
        <>
          <p>
            {r.operation} · <StatusBadge status={r.status} />
            {r.phase && r.status === 'running' ? ` · phase ${r.phase}` : ''}
            {r.temporal_ui && (
              <>
                {' '}
                ·{' '}
                <a href={r.temporal_ui} target="_blank" rel="noopener noreferrer">
                  Open in Temporal Web UI
                </a>
              </>
            )}
          </p>
          {r.status === 'running' && r.waiting && (
            <RunWaitingBox incarnation={incarnation} applyId={applyId} waiting={r.waiting} />
          )}
          {r.plan_id && (
            <p data-testid="applied-plan">
              Applied plan{' '}
              <Link href={planHref(incarnation, r.plan_id)}>
                <code>{r.plan_id}</code>
              </Link>
            </p>
          )}
          {refusedCount > 0 && (
            <div class="notice" role="alert" data-testid="drift-refused">
              {refusedCount} host{refusedCount === 1 ? ' was' : 's were'} refused because{' '}
              {refusedCount === 1 ? 'it' : 'they'} changed since the plan was made; nothing was applied there. Unlock
              the incarnation, make a new plan (it shows the hosts as they are now) and apply that.
            </div>
          )}
          <p class="counts" data-testid="run-counts">
            {groups.map(([status, hosts]) => (
              <span key={status} class="tag">
                {status} {hosts.length}
              </span>
            ))}
          </p>
          {r.error && (
            <div class="error" role="alert">
              {r.error}
            </div>
          )}
          {r.render_errors != null && <pre class="error">{JSON.stringify(r.render_errors, null, 2)}</pre>}
          <div data-testid="run-steps">
            {r.hosts.length === 0 && <p class="muted">No host was targeted.</p>}
            {groups.map(([status, hosts]) => (
              <OutcomeGroup key={status} status={status} hosts={hosts} />
            ))}
          </div>
        </>
      )}
    </section>
  );
}
