// Drift: whether the hosts still hold what the incarnation last applied (issue 17 item 4). The keeper
// checks on a schedule with a plan; an incarnation may carry no `drift` at all (a keeper without
// drift checks), which reads as "unchecked". The badge goes on the list and the page; the page also
// names the drifted hosts and links to the plan that shows, per host, what differs.
import { Ago, Link } from '../components';

export type DriftStatus = 'unchecked' | 'in_sync' | 'drifted' | 'check_failed';

export interface Drift {
  interval: string | null;
  auto_repair: boolean;
  status: DriftStatus;
  checked_at: string | null;
  /** The check's plan: its diffs are what drifted. */
  plan_id: string | null;
  drifted_sids: string[];
}

function label(d: Drift | null | undefined): { status: string; text: string } {
  if (!d) return { status: 'unchecked', text: 'unchecked' };
  const n = d.drifted_sids?.length ?? 0;
  switch (d.status) {
    case 'in_sync':
      return { status: d.status, text: 'in sync' };
    case 'drifted':
      return { status: d.status, text: `drifted: ${n} host${n === 1 ? '' : 's'}` };
    case 'check_failed':
      return { status: d.status, text: 'check failed' };
    case 'unchecked':
      return { status: d.status, text: 'unchecked' };
    // A status this UI does not know yet is shown as the keeper names it.
    default:
      return { status: String(d.status), text: String(d.status) };
  }
}

export function DriftBadge({ drift }: { drift: Drift | null | undefined }) {
  const l = label(drift);
  const title = drift?.checked_at
    ? `drift last checked ${new Date(drift.checked_at).toLocaleString()}`
    : 'drift never checked';
  return (
    <span class={`badge drift drift-${l.status}`} data-testid="drift-badge" data-drift={l.status} title={title}>
      {l.text}
    </span>
  );
}

/** The incarnation page's drift line, and when hosts drifted, which ones and where to see how. */
export function DriftPanel({ incarnation, drift }: { incarnation: string; drift: Drift | null | undefined }) {
  const planHref = drift?.plan_id
    ? `/ui/incarnations/${encodeURIComponent(incarnation)}/plans/${encodeURIComponent(drift.plan_id)}`
    : undefined;
  const sids = drift?.drifted_sids ?? [];
  return (
    <div class="drift-panel" data-testid="drift">
      <p>
        Drift <DriftBadge drift={drift} />
        {drift && (
          <>
            {' '}
            · checked <Ago at={drift.checked_at} />
          </>
        )}
        {drift && <> · {drift.interval ? `checked every ${drift.interval}` : 'no scheduled check'}</>}
        {drift && <> · automatic repair {drift.auto_repair ? 'on' : 'off'}</>}
        {!drift && <span class="muted"> · this keeper does not check for drift</span>}
      </p>
      {drift?.status === 'drifted' && (
        <div class="notice" data-testid="drifted-hosts">
          <p>These hosts no longer hold what was last applied:</p>
          <ul>
            {sids.map((sid) => (
              <li key={sid}>
                <code>{sid}</code>
              </li>
            ))}
          </ul>
          {planHref && (
            <p>
              <Link href={planHref}>See what changed on each host</Link> (plan <code>{drift.plan_id}</code>)
            </p>
          )}
        </div>
      )}
      {drift?.status === 'check_failed' && planHref && (
        <p class="muted">
          The last check could not finish: <Link href={planHref}>see the check</Link>.
        </p>
      )}
    </div>
  );
}
