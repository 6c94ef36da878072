// An incarnation's recent plans, newest first, each with its status and what it would change; a
// plan links to its view, an applied one also to the run that applied it.
import { api, enc, type Page } from '../api';
import { Ago, Busy, ErrorBox, Link, StatusBadge } from '../components';
import { usePoll } from '../hooks';
import { planHref, runHref, type PlanSummary } from './plan';

/** The page shows the latest few; older plans are rarely worth applying (they expire within hours). */
const SHOWN = 10;

function WouldChange({ p }: { p: PlanSummary }) {
  if (p.status === 'planning') return <span class="muted">checking…</span>;
  const steps = p.summary?.would_change ?? 0;
  const hosts = p.summary?.hosts?.changed ?? 0;
  return (
    <>
      {steps} step{steps === 1 ? '' : 's'} on {hosts} host{hosts === 1 ? '' : 's'}
    </>
  );
}

export function PlanList({ incarnation }: { incarnation: string }) {
  const plans = usePoll(
    () => api<Page<PlanSummary>>('GET', `/v1/incarnations/${enc(incarnation)}/plans?limit=${SHOWN}`),
    5000,
    [incarnation],
  );
  const items = plans.data?.items ?? [];
  return (
    <section aria-label="Plans">
      <h3>Recent plans</h3>
      <ErrorBox error={plans.error} />
      {!plans.data && !plans.error && <Busy busy label="Loading plans…" />}
      {plans.data && items.length === 0 && <p class="muted">No plans yet.</p>}
      {items.length > 0 && (
        <table class="grid" data-testid="plans-table">
          <thead>
            <tr>
              <th>Plan</th>
              <th>Operation</th>
              <th>Status</th>
              <th>Would change</th>
              <th>Made</th>
              <th>Applied by</th>
            </tr>
          </thead>
          <tbody>
            {items.map((p) => (
              <tr key={p.plan_id} data-plan={p.plan_id}>
                <td>
                  <Link href={planHref(incarnation, p.plan_id)}>{p.plan_id}</Link>
                </td>
                <td>{p.operation}</td>
                <td>
                  <StatusBadge status={p.status} />
                  {p.error ? <span class="muted"> {p.error}</span> : ''}
                </td>
                <td>
                  <WouldChange p={p} />
                </td>
                <td>
                  <Ago at={p.created_at} />
                </td>
                <td>
                  {p.applied_by ? (
                    <Link href={runHref(incarnation, p.applied_by)}>{p.applied_by}</Link>
                  ) : (
                    <span class="muted">—</span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
