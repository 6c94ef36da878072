// An incarnation's runs, newest first, paged with the API's cursors (GET .../runs): operation,
// status, host counts, and for runs that applied a plan or converged a new host, which. Each links
// to its run report; failed runs say why in the row.
import { api, enc, type Page } from '../api';
import { Ago, Busy, ErrorBox, Link, PagerBar, StatusBadge } from '../components';
import { usePager, usePoll } from '../hooks';
import { planHref, runHref } from './plan';

/** Rows per page: an incarnation's recent history at a glance; older pages are a click away. */
const PAGE_SIZE = 20;

interface RunRow {
  apply_id: string;
  operation: string;
  status: string;
  error: string | null;
  created_at: string;
  finished_at: string | null;
  summary: { hosts?: Record<string, number> } | null;
  plan_id?: string | null;
  target_sids?: string[] | null;
}

function Hosts({ r }: { r: RunRow }) {
  const h = r.summary?.hosts;
  if (!h) return <span class="muted">{r.status === 'running' ? 'running…' : '—'}</span>;
  const parts = (['changed', 'ok', 'failed', 'unknown', 'skipped'] as const)
    .filter((k) => (h[k] ?? 0) > 0)
    .map((k) => `${h[k]} ${k}`);
  return <>{parts.length > 0 ? parts.join(', ') : 'no host'}</>;
}

export function RunList({ incarnation }: { incarnation: string }) {
  const pager = usePager();
  const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (pager.cursor) query.set('cursor', pager.cursor);
  const path = `/v1/incarnations/${enc(incarnation)}/runs?${query.toString()}`;
  const runs = usePoll(() => api<Page<RunRow>>('GET', path), 3000, [path]);
  const items = runs.data?.items ?? [];
  return (
    <section aria-label="Runs">
      <h3>Runs</h3>
      <ErrorBox error={runs.error} />
      {!runs.data && !runs.error && <Busy busy label="Loading runs…" />}
      {runs.data && items.length === 0 && <p class="muted">No runs yet.</p>}
      {items.length > 0 && (
        <table class="grid" data-testid="runs-table">
          <thead>
            <tr>
              <th>Run</th>
              <th>Operation</th>
              <th>Status</th>
              <th>Hosts</th>
              <th>Started</th>
              <th>From</th>
            </tr>
          </thead>
          <tbody>
            {items.map((r) => (
              <tr key={r.apply_id} data-run={r.apply_id} data-status={r.status}>
                <td>
                  <Link href={runHref(incarnation, r.apply_id)}>{r.apply_id}</Link>
                </td>
                <td>{r.operation}</td>
                <td>
                  <StatusBadge status={r.status} />
                  {r.status === 'failed' && r.error ? <span class="muted"> {r.error}</span> : ''}
                </td>
                <td>
                  <Hosts r={r} />
                </td>
                <td>
                  <Ago at={r.created_at} />
                </td>
                <td>
                  {r.plan_id ? (
                    <>
                      plan <Link href={planHref(incarnation, r.plan_id)}>{r.plan_id}</Link>
                    </>
                  ) : r.target_sids ? (
                    <>new host {r.target_sids.join(', ')}</>
                  ) : (
                    <span class="muted">—</span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {runs.data && (
        <PagerBar
          label="runs"
          page={pager.page}
          hasPrevious={pager.page > 1}
          nextCursor={runs.data.next_cursor}
          onPrevious={pager.previous}
          onNext={pager.next}
        />
      )}
    </section>
  );
}
