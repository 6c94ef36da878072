// Incarnations: the list and creation. Creation is asynchronous (202 with an apply_id); the new
// incarnation's page follows it from `applying` to `ready` or `error_locked`.
import { useState } from 'preact/hooks';
import { api, listAll, type Page } from '../api';
import { Ago, Busy, ErrorBox, Link, PagerBar, StatusBadge, parseInput, splitList } from '../components';
import { useAction, usePager, usePoll } from '../hooks';
import { navigate } from '../router';
import { DriftBadge, type Drift } from './drift';
import type { Service } from './services';
import { Granted } from '../permissions';

export interface IncarnationSummary {
  name: string;
  service: string;
  covens: string[];
  status: string;
  updated_at?: string;
  drift?: Drift | null;
}

function CreateIncarnation({ services }: { services: Service[] }) {
  const [form, setForm] = useState({ name: '', service: '', covens: '', input: '{}' });
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const name = form.name.trim();
    const accepted = await action.run(() =>
      api<{ apply_id: string }>('POST', '/v1/incarnations', {
        name,
        service: form.service || services[0]?.name,
        covens: splitList(form.covens),
        input: parseInput(form.input),
      }),
    );
    if (accepted) navigate(`/ui/incarnations/${encodeURIComponent(name)}`);
  };
  return (
    <form class="inline-form" onSubmit={submit} aria-label="Create an incarnation">
      <h3>Create an incarnation</h3>
      <label>
        Name{' '}
        <input
          name="name"
          required
          value={form.name}
          onInput={(e) => setForm({ ...form, name: (e.target as HTMLInputElement).value })}
        />
      </label>
      <label>
        Service
        <select
          name="service"
          value={form.service}
          onChange={(e) => setForm({ ...form, service: (e.target as HTMLSelectElement).value })}
        >
          {services.map((s) => (
            <option key={s.name} value={s.name}>
              {s.name} ({s.ref})
            </option>
          ))}
        </select>
      </label>
      <label>
        Covens{' '}
        <input
          name="covens"
          value={form.covens}
          placeholder="web"
          onInput={(e) => setForm({ ...form, covens: (e.target as HTMLInputElement).value })}
        />
      </label>
      <label>
        Input (JSON){' '}
        <input
          name="input"
          value={form.input}
          onInput={(e) => setForm({ ...form, input: (e.target as HTMLInputElement).value })}
        />
      </label>
      <button type="submit" disabled={action.busy || services.length === 0}>
        Create
      </button>
      <Busy busy={action.busy} label="Creating…" />
      {services.length === 0 && <p class="muted">Register a service first.</p>}
      <ErrorBox error={action.error} />
    </form>
  );
}

/** Rows per page; the server filters and pages. */
const PAGE_SIZE = 100;
const STATUSES = ['applying', 'ready', 'error_locked'] as const;

export function Incarnations() {
  const [filter, setFilter] = useState({ status: '', service: '' });
  const pager = usePager();
  const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (filter.status) query.set('status', filter.status);
  if (filter.service) query.set('service', filter.service);
  if (pager.cursor) query.set('cursor', pager.cursor);
  const path = `/v1/incarnations?${query.toString()}`;
  const list = usePoll(() => api<Page<IncarnationSummary>>('GET', path), 3000, [path]);
  const services = usePoll(() => listAll<Service>('/v1/services'), 30_000);
  const setFilterAndReset = (f: Partial<typeof filter>) => {
    pager.reset();
    setFilter({ ...filter, ...f });
  };
  return (
    <section>
      <h2>Incarnations</h2>
      <Granted permission="incarnations:create" what="create incarnations">
        <CreateIncarnation services={services.data ?? []} />
      </Granted>
      <form class="filters" aria-label="Filter incarnations" onSubmit={(e) => e.preventDefault()}>
        <label>
          Status
          <select
            name="status-filter"
            value={filter.status}
            onChange={(e) => setFilterAndReset({ status: (e.target as HTMLSelectElement).value })}
          >
            <option value="">any</option>
            {STATUSES.map((st) => (
              <option key={st} value={st}>
                {st}
              </option>
            ))}
          </select>
        </label>
        <label>
          Service
          <select
            name="service-filter"
            value={filter.service}
            onChange={(e) => setFilterAndReset({ service: (e.target as HTMLSelectElement).value })}
          >
            <option value="">any</option>
            {(services.data ?? []).map((sv) => (
              <option key={sv.name} value={sv.name}>
                {sv.name}
              </option>
            ))}
          </select>
        </label>
      </form>
      <ErrorBox error={list.error ?? services.error} />
      {!list.data && !list.error && <Busy busy label="Loading…" />}
      {list.data && (
        <table class="grid" data-testid="incarnations-table">
          <thead>
            <tr>
              <th>Name</th>
              <th>Service</th>
              <th>Status</th>
              <th>Drift</th>
              <th>Covens</th>
              <th>Updated</th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.length === 0 && (
              <tr>
                <td colSpan={6} class="muted">
                  {filter.status || filter.service ? 'No incarnation matches these filters.' : 'No incarnations yet.'}
                </td>
              </tr>
            )}
            {list.data.items.map((i) => (
              <tr key={i.name} data-name={i.name}>
                <td>
                  <Link href={`/ui/incarnations/${encodeURIComponent(i.name)}`}>{i.name}</Link>
                </td>
                <td>{i.service}</td>
                <td>
                  <StatusBadge status={i.status} />
                </td>
                <td>
                  <DriftBadge drift={i.drift} />
                </td>
                <td>
                  {i.covens.map((c) => (
                    <span class="tag" key={c}>
                      {c}
                    </span>
                  ))}
                </td>
                <td>
                  <Ago at={i.updated_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {list.data && (
        <PagerBar
          label="incarnations"
          page={pager.page}
          hasPrevious={pager.page > 1}
          nextCursor={list.data.next_cursor}
          onPrevious={pager.previous}
          onNext={pager.next}
        />
      )}
    </section>
  );
}
