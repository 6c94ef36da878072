// One plan (docs/plans.md): what running an operation would change, host by host, before anything
// changes. Hosts where something would change (or whose check failed) are shown with each such step
// and its diff; hosts with no change are one collapsed line, so a plan of many hosts stays readable.
// A plan that is `ready` can be applied exactly as shown; the keeper answers 409 when it is stale,
// applied or expired, and that answer is shown as it is.
import { useEffect, useState } from 'preact/hooks';
import { api, enc } from '../api';
import { Ago, Busy, ErrorBox, Link, StatusBadge } from '../components';
import { useAction } from '../hooks';
import { navigate } from '../router';
import { StepDiff } from '../step-diff';
import { Granted } from '../permissions';

export type PlanStatus = 'planning' | 'ready' | 'failed' | 'applied' | 'expired';

export interface PlanStep {
  index: number;
  name: string | null;
  module: string;
  status: string;
  would_change: boolean;
  output: string;
  skip_reason: string | null;
  diff: unknown;
}
export interface PlanHost {
  sid: string;
  status: string;
  reason: string | null;
  steps: PlanStep[];
}
export interface PlanSummary {
  plan_id: string;
  operation: string;
  status: PlanStatus;
  error: string | null;
  summary: { hosts?: Record<string, number>; would_change?: number } | null;
  created_at: string;
  expires_at: string;
  applied_by: string | null;
}
export interface Plan extends PlanSummary {
  hosts: PlanHost[];
  render_errors?: unknown;
}

export const planHref = (incarnation: string, planId: string) =>
  `/ui/incarnations/${enc(incarnation)}/plans/${enc(planId)}`;
export const runHref = (incarnation: string, applyId: string) =>
  `/ui/incarnations/${enc(incarnation)}/runs/${enc(applyId)}`;

/** How often a plan still checking its hosts is read again. */
const PLANNING_POLL_MS = 1500;

/** A step worth showing: it would change something, or its check did not give an answer. */
const notable = (s: PlanStep) => s.would_change || s.status === 'failed' || s.status === 'unknown';
const hostNotable = (h: PlanHost) => h.status === 'failed' || h.status === 'unknown' || h.steps.some(notable);

/** The plan, read again while its hosts are checked, and once more when it expires (or on demand). */
function usePlan(path: string) {
  const [plan, setPlan] = useState<Plan>();
  const [error, setError] = useState<unknown>();
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let alive = true;
    let timer: number | undefined;
    const load = async () => {
      try {
        const p = await api<Plan>('GET', path);
        if (!alive) return;
        setPlan(p);
        setError(undefined);
        if (p.status === 'planning') timer = window.setTimeout(load, PLANNING_POLL_MS);
        else if (p.status === 'ready') {
          // The keeper says `expired` once the time is past; read it then, so the button goes away.
          const left = Date.parse(p.expires_at) - Date.now();
          if (left > 0 && left < 2 ** 31 - 1) timer = window.setTimeout(load, left + 500);
        }
      } catch (err) {
        if (alive) setError(err);
      }
    };
    void load();
    return () => {
      alive = false;
      window.clearTimeout(timer);
    };
  }, [path, tick]);
  return { plan, error, refresh: () => setTick((t) => t + 1) };
}

function Expiry({ plan }: { plan: Plan }) {
  const at = new Date(plan.expires_at);
  if (plan.status === 'applied') return null;
  const mins = Math.round((at.getTime() - Date.now()) / 60_000);
  if (plan.status === 'expired' || mins < 0)
    return <span data-testid="plan-expiry">expired at {at.toLocaleString()}</span>;
  return (
    <span data-testid="plan-expiry">
      can be applied until <time dateTime={plan.expires_at}>{at.toLocaleString()}</time> (in {mins} min)
    </span>
  );
}

function StepRow({ step }: { step: PlanStep }) {
  return (
    <div class="plan-step" data-index={step.index}>
      <p>
        <StatusBadge status={step.status} /> step {step.index} <strong>{step.name ?? step.module}</strong>{' '}
        <code class="muted">{step.module}</code>
        {step.output && <span class="muted"> · {step.output.split('\n')[0]}</span>}
      </p>
      <StepDiff diff={step.diff} />
    </div>
  );
}

function HostChanges({ host }: { host: PlanHost }) {
  const steps = host.steps.filter(notable);
  return (
    <section class="plan-host" data-sid={host.sid} aria-label={`Host ${host.sid}`}>
      <h4>
        {host.sid} <StatusBadge status={host.status} />{' '}
        <span class="muted">
          {steps.length} step{steps.length === 1 ? '' : 's'} would change
        </span>
      </h4>
      {host.reason && <p class="muted">{host.reason}</p>}
      {steps.map((s) => (
        <StepRow key={s.index} step={s} />
      ))}
    </section>
  );
}

/**
 * The apply action lives with the view, not the button: after a 409 the plan is read again and may
 * now be `applied` or `expired`, which removes the button, and the keeper's answer must stay shown.
 */
function useApply(incarnation: string, planId: string, onRefused: () => void) {
  const action = useAction();
  const apply = async () => {
    const r = await action.run(() =>
      api<{ apply_id: string }>('POST', `/v1/incarnations/${enc(incarnation)}/runs`, { plan_id: planId }),
    );
    if (r) navigate(runHref(incarnation, r.apply_id));
    else onRefused();
  };
  return { action, apply };
}

export function PlanView({ incarnation, planId }: { incarnation: string; planId: string }) {
  const { plan: p, error, refresh } = usePlan(`/v1/incarnations/${enc(incarnation)}/plans/${enc(planId)}`);
  const changing = p?.hosts.filter(hostNotable) ?? [];
  const quiet = p?.hosts.filter((h) => !hostNotable(h)) ?? [];
  const counts = Object.entries(p?.summary?.hosts ?? {}).filter(([, n]) => n > 0);
  const expired = p !== undefined && p.status === 'ready' && Date.parse(p.expires_at) <= Date.now();
  const { action, apply } = useApply(incarnation, planId, refresh);
  return (
    <section class="plan" aria-label={`Plan ${planId}`}>
      <p>
        <Link href={`/ui/incarnations/${enc(incarnation)}`}>← {incarnation}</Link>
      </p>
      <h2>
        Plan <code>{planId}</code> {p && <StatusBadge status={expired ? 'expired' : p.status} />}
      </h2>
      <ErrorBox error={error} />
      {!p && !error && <Busy busy label="Loading the plan…" />}
      {p && (
        <>
          <p>
            Operation <strong>{p.operation}</strong> · made <Ago at={p.created_at} /> · <Expiry plan={p} />
            {p.applied_by && (
              <>
                {' '}
                · applied by run <Link href={runHref(incarnation, p.applied_by)}>{p.applied_by}</Link>
              </>
            )}
          </p>
          {p.status === 'planning' && (
            <Busy busy label="Checking the hosts: nothing is changed while a plan is made…" />
          )}
          {p.error && (
            <div class="error" role="alert">
              {p.error}
            </div>
          )}
          {p.render_errors != null && <pre class="error">{JSON.stringify(p.render_errors, null, 2)}</pre>}
          {p.status !== 'planning' && (
            <p class="counts" data-testid="plan-counts">
              <span class="tag">
                {p.summary?.would_change ?? 0} step{p.summary?.would_change === 1 ? '' : 's'} would change
              </span>
              {counts.map(([status, n]) => (
                <span key={status} class="tag">
                  {n} host{n === 1 ? '' : 's'} {status}
                </span>
              ))}
            </p>
          )}
          <div class="apply-plan">
            {p.status === 'ready' && !expired && (
              <Granted permission="incarnations:run" what="apply plans">
                <button type="submit" disabled={action.busy} onClick={() => void apply()}>
                  Apply this plan
                </button>
              </Granted>
            )}
            <Busy busy={action.busy} label="Starting the run…" />
            <ErrorBox error={action.error} />
          </div>
          <div data-testid="plan-hosts">
            {p.hosts.length === 0 && p.status !== 'planning' && <p class="muted">No host was targeted.</p>}
            {changing.map((h) => (
              <HostChanges key={h.sid} host={h} />
            ))}
            {quiet.length > 0 && (
              <details class="quiet-hosts" data-testid="plan-quiet-hosts">
                <summary>
                  {p.status === 'planning' ? 'Still checking or no change' : 'No change'} on {quiet.length} host
                  {quiet.length === 1 ? '' : 's'}
                </summary>
                <p>
                  {quiet.map((h) => (
                    <span key={h.sid} class="tag">
                      {h.sid}
                      {h.status === 'pending' ? ' (checking)' : ''}
                    </span>
                  ))}
                </p>
              </details>
            )}
          </div>
        </>
      )}
    </section>
  );
}
