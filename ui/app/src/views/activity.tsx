// The activity stream (GET /v1/activity, docs/api.md "Activity"): who changed what, when, from
// where and with what outcome, newest first. Filters by actor, target and outcome are the API's own
// (the server filters, so paging stays exact); "Older" follows the keyset cursor. Rows that started
// a run, a plan or an execution link to it; targets under an incarnation link to its page.
import { useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { Ago, Busy, ErrorBox, Link, PagerBar } from '../components';
import { usePager, usePoll } from '../hooks';
import { planHref, runHref } from './plan';

/** Rows per page: the last few minutes of a busy cluster; older rows are a click away. */
const PAGE_SIZE = 25;
const OUTCOMES = [
  ['ok', 'succeeded (below 400)'],
  ['refused', 'refused (4xx)'],
  ['failed', 'failed (5xx)'],
] as const;

interface ActivityRow {
  id: string;
  at: string;
  actor: string;
  actor_kind: string;
  jti: string | null;
  source: string | null;
  via: string;
  action: string;
  target: string | null;
  status: number;
  apply_id: string | null;
  execution_id: string | null;
}

interface Filter {
  actor: string;
  target: string;
  outcome: string;
}

/** The incarnation a target lies under (`/v1/incarnations/web/runs` -> web), if any. */
function incarnationOf(target: string | null): string | undefined {
  const m = target ? /^\/v1\/incarnations\/([^/]+)/.exec(target) : null;
  return m ? decodeURIComponent(m[1]) : undefined;
}

function outcomeOf(status: number): string {
  return status >= 500 ? 'failed' : status >= 400 ? 'refused' : 'ok';
}

function Started({ row }: { row: ActivityRow }) {
  if (row.execution_id)
    return <Link href={`/ui/executions/${encodeURIComponent(row.execution_id)}`}>{row.execution_id}</Link>;
  const name = incarnationOf(row.target);
  if (!row.apply_id) return <span class="muted">—</span>;
  if (!name) return <>{row.apply_id}</>;
  // Plan ids carry `.plan.` after the operation (runs/apply-id.ts); everything else is a run.
  const href = row.apply_id.includes('.plan.') ? planHref(name, row.apply_id) : runHref(name, row.apply_id);
  return <Link href={href}>{row.apply_id}</Link>;
}

function Filters({ applied, onApply }: { applied: Filter; onApply(f: Filter): void }) {
  const [draft, setDraft] = useState(applied);
  const text = (k: 'actor' | 'target', label: string, placeholder: string) => (
    <label>
      {label}{' '}
      <input
        name={`${k}-filter`}
        value={draft[k]}
        placeholder={placeholder}
        onInput={(e) => setDraft({ ...draft, [k]: (e.target as HTMLInputElement).value })}
      />
    </label>
  );
  return (
    <form
      class="filters"
      aria-label="Filter activity"
      onSubmit={(e) => {
        e.preventDefault();
        onApply({ actor: draft.actor.trim(), target: draft.target.trim(), outcome: draft.outcome });
      }}
    >
      {text('actor', 'Actor', 'alice, keeper:drift-check')}
      {text('target', 'Target', '/v1/incarnations/web')}
      <label>
        Outcome
        <select
          name="outcome-filter"
          value={draft.outcome}
          onChange={(e) => {
            // A choice applies at once, with whatever the text fields hold.
            const next = { ...draft, outcome: (e.target as HTMLSelectElement).value };
            setDraft(next);
            onApply({ actor: next.actor.trim(), target: next.target.trim(), outcome: next.outcome });
          }}
        >
          <option value="">any</option>
          {OUTCOMES.map(([v, label]) => (
            <option key={v} value={v}>
              {label}
            </option>
          ))}
        </select>
      </label>
      <button type="submit">Filter</button>
    </form>
  );
}

export function Activity() {
  const [filter, setFilter] = useState<Filter>({ actor: '', target: '', outcome: '' });
  const pager = usePager();
  const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
  for (const k of ['actor', 'target', 'outcome'] as const) if (filter[k]) query.set(k, filter[k]);
  if (pager.cursor) query.set('cursor', pager.cursor);
  const path = `/v1/activity?${query.toString()}`;
  const rows = usePoll(() => api<Page<ActivityRow>>('GET', path), 5000, [path]);
  const items = rows.data?.items ?? [];
  const filtered = Boolean(filter.actor || filter.target || filter.outcome);
  return (
    <section>
      <h2>Activity</h2>
      <p class="muted">
        Every change made through the API or MCP, and every run the converger or a drift repair started, newest first.
      </p>
      <Filters
        applied={filter}
        onApply={(f) => {
          pager.reset();
          setFilter(f);
        }}
      />
      <ErrorBox error={rows.error} />
      {!rows.data && !rows.error && <Busy busy label="Loading activity…" />}
      {rows.data && (
        <table class="grid" data-testid="activity-table">
          <thead>
            <tr>
              <th>When</th>
              <th>Actor</th>
              <th>Via</th>
              <th>Action</th>
              <th>Target</th>
              <th>Status</th>
              <th>Started</th>
              <th>From</th>
            </tr>
          </thead>
          <tbody>
            {items.length === 0 && (
              <tr>
                <td colSpan={8} class="muted">
                  {filtered ? 'No activity matches these filters.' : 'No activity yet.'}
                </td>
              </tr>
            )}
            {items.map((r) => {
              const name = incarnationOf(r.target);
              return (
                <tr key={r.id} data-id={r.id} data-outcome={outcomeOf(r.status)}>
                  <td>
                    <Ago at={r.at} />
                  </td>
                  <td data-col="actor" title={r.jti ? `token ${r.jti}` : undefined}>
                    {r.actor} <span class="muted">({r.actor_kind})</span>
                  </td>
                  <td>{r.via}</td>
                  <td data-col="action">{r.action}</td>
                  <td data-col="target">
                    {name ? (
                      <Link href={`/ui/incarnations/${encodeURIComponent(name)}`}>{r.target}</Link>
                    ) : (
                      (r.target ?? <span class="muted">—</span>)
                    )}
                  </td>
                  <td data-col="status">
                    <span class={`badge outcome-${outcomeOf(r.status)}`}>{r.status}</span>
                  </td>
                  <td>
                    <Started row={r} />
                  </td>
                  <td>{r.source ?? <span class="muted">—</span>}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {rows.data && (
        <PagerBar
          label="activity"
          page={pager.page}
          hasPrevious={pager.page > 1}
          nextCursor={rows.data.next_cursor}
          onPrevious={pager.previous}
          onNext={pager.next}
          previousLabel="Newer"
          nextLabel="Older"
        />
      )}
    </section>
  );
}
