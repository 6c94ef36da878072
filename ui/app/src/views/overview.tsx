// The overview (issue 35), the page signing in lands on: is the fleet healthy right now? Souls and
// incarnations by status, what needs attention (locked and drifted incarnations, failed runs) with
// links to them, the last runs, and four small charts. One request (GET /v1/overview), read again
// every 10 s: the figures are aggregates, a few seconds old is fresh enough.
import { api } from '../api';
import { BarChart, LineChart, type Point } from '../charts';
import { Ago, ErrorBox, Link, StatusBadge } from '../components';
import { usePoll } from '../hooks';

interface OverviewRun {
  apply_id: string;
  incarnation: string;
  operation: string;
  status: string;
  error: string | null;
  created_at: string;
  finished_at: string | null;
  duration_ms: number | null;
  hosts: number;
  hosts_changed: number;
  hosts_failed: number;
}
export interface OverviewData {
  generated_at: string;
  souls: { total: number; by_status: Record<string, number>; change_1h: Record<string, number> };
  incarnations: { total: number; by_status: Record<string, number>; by_drift: Record<string, number> };
  attention: {
    incarnation: string;
    status: string;
    drift_status: string;
    drifted_hosts: string[];
    reason: string;
    apply_id: string | null;
  }[];
  failed_runs: OverviewRun[];
  last_runs: OverviewRun[];
  charts: {
    runs_per_hour: { hour: string; succeeded: number; failed: number; running: number }[];
    duration_per_day: { day: string; runs: number; median_ms: number; p95_ms: number }[];
    hosts_changed_per_run: {
      apply_id: string;
      incarnation: string;
      created_at: string;
      hosts: number;
      hosts_changed: number;
    }[];
    connected_souls: { at: string; connected: number }[];
  };
}

const POLL_MS = 10_000;
const hhmm = (iso: string) => new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
const runHref = (r: { incarnation: string; apply_id: string }) =>
  `/ui/incarnations/${encodeURIComponent(r.incarnation)}/runs/${encodeURIComponent(r.apply_id)}`;
const seconds = (ms: number | null) =>
  ms === null ? '' : ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;

function Tiles({
  id,
  counts,
  change,
  href,
}: {
  id: string;
  counts: Record<string, number>;
  change?: Record<string, number>;
  href?: string;
}) {
  return (
    <div class="tiles" data-testid={`tiles-${id}`}>
      {Object.entries(counts).map(([k, n]) => {
        const d = change?.[k] ?? 0;
        const body = (
          <>
            <span class={`badge status-${k} drift-${k}`}>{k.replace('_', ' ')}</span>
            <strong>{n}</strong>
            {change && (
              <small class={d === 0 ? 'muted' : undefined} title="change over the last hour">
                {d > 0 ? `+${d}` : d < 0 ? `−${-d}` : '±0'} in 1 h
              </small>
            )}
          </>
        );
        return (
          <div class="tile" key={k} data-key={k} data-count={n} data-change={change ? d : undefined}>
            {href ? <Link href={href}>{body}</Link> : body}
          </div>
        );
      })}
    </div>
  );
}

function Attention({ o }: { o: OverviewData }) {
  if (o.attention.length === 0 && o.failed_runs.length === 0)
    return (
      <p class="all-well" data-testid="all-well">
        Nothing needs attention: no incarnation is locked or drifted and no run failed in the last 24 hours.
      </p>
    );
  return (
    <table class="grid" data-testid="attention">
      <thead>
        <tr>
          <th>what</th>
          <th>status</th>
          <th>reason</th>
          <th>when</th>
        </tr>
      </thead>
      <tbody>
        {o.attention.map((a) => (
          <tr key={`i-${a.incarnation}`} data-incarnation={a.incarnation}>
            <td>
              incarnation <Link href={`/ui/incarnations/${encodeURIComponent(a.incarnation)}`}>{a.incarnation}</Link>
            </td>
            <td>
              <StatusBadge status={a.status} />{' '}
              {a.drift_status !== 'in_sync' && a.drift_status !== 'unchecked' && (
                <span class={`badge drift-${a.drift_status}`}>{a.drift_status.replace('_', ' ')}</span>
              )}
            </td>
            <td>
              {a.reason}
              {a.drifted_hosts.length > 0 && (
                <span class="muted">
                  {' '}
                  ({a.drifted_hosts.slice(0, 5).join(', ')}
                  {a.drifted_hosts.length > 5 ? ', …' : ''})
                </span>
              )}
            </td>
            <td>
              {a.apply_id && <Link href={runHref({ incarnation: a.incarnation, apply_id: a.apply_id })}>last run</Link>}
            </td>
          </tr>
        ))}
        {o.failed_runs.map((r) => (
          <tr key={`r-${r.apply_id}`} data-run={r.apply_id}>
            <td>
              run <Link href={runHref(r)}>{r.apply_id}</Link>
            </td>
            <td>
              <StatusBadge status={r.status} />
            </td>
            <td>{r.error ?? `${r.hosts_failed} of ${r.hosts} hosts failed`}</td>
            <td>
              <Ago at={r.created_at} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Charts({ o }: { o: OverviewData }) {
  const c = o.charts;
  const perHour: Point[] = c.runs_per_hour.map((h) => ({
    label: hhmm(h.hour),
    values: [h.succeeded, h.failed, h.running],
  }));
  const perDay: Point[] = c.duration_per_day.map((d) => ({
    label: d.day.slice(5, 10),
    values: [d.median_ms, d.p95_ms],
    title: `${d.day.slice(0, 10)}: ${d.runs} runs, median ${seconds(d.median_ms)}, p95 ${seconds(d.p95_ms)}`,
  }));
  const changed: Point[] = c.hosts_changed_per_run.map((r) => ({
    label: r.apply_id,
    tick: hhmm(r.created_at),
    values: [r.hosts_changed],
    title: `${r.apply_id}: ${r.hosts_changed} of ${r.hosts} hosts changed`,
  }));
  const connected: Point[] = c.connected_souls.map((p) => ({ label: hhmm(p.at), values: [p.connected] }));
  return (
    <div class="charts">
      <BarChart
        id="runs-per-hour"
        title="Runs per hour (last 24 h)"
        stacked
        empty="no runs"
        series={[
          { name: 'succeeded', cls: 'fill-good' },
          { name: 'failed', cls: 'fill-bad' },
          { name: 'running', cls: 'fill-warn' },
        ]}
        points={perHour}
      />
      <BarChart
        id="duration-per-day"
        title="Run duration per day: median and p95"
        unit=" s"
        scale={1000}
        empty="no finished run in 14 days"
        series={[
          { name: 'median', cls: 'fill-accent' },
          { name: 'p95', cls: 'fill-muted' },
        ]}
        points={perDay}
      />
      <BarChart
        id="hosts-changed"
        title="Hosts changed per run (last 30 runs)"
        empty="no finished run"
        series={[{ name: 'changed', cls: 'fill-accent' }]}
        points={changed}
      />
      <LineChart id="connected-souls" title="Connected souls (last 24 h)" points={connected} empty="no data" />
    </div>
  );
}

export function Overview() {
  const polled = usePoll(() => api<OverviewData>('GET', '/v1/overview'), POLL_MS);
  const o = polled.data;
  return (
    <section>
      <h2>Overview</h2>
      <ErrorBox error={polled.error} />
      {!o ? (
        <p class="muted">Loading…</p>
      ) : (
        <>
          <div class="overview-top">
            <div>
              <h3>
                <Link href="/ui/souls">Souls</Link> <span class="muted">{o.souls.total}</span>
              </h3>
              <Tiles id="souls" counts={o.souls.by_status} change={o.souls.change_1h} href="/ui/souls" />
            </div>
            <div>
              <h3>
                <Link href="/ui/incarnations">Incarnations</Link> <span class="muted">{o.incarnations.total}</span>
              </h3>
              <Tiles id="incarnations" counts={o.incarnations.by_status} href="/ui/incarnations" />
              <Tiles id="drift" counts={o.incarnations.by_drift} />
            </div>
          </div>
          <h3>Needs attention</h3>
          <Attention o={o} />
          <Charts o={o} />
          <h3>Last runs</h3>
          <table class="grid" data-testid="last-runs">
            <thead>
              <tr>
                <th>run</th>
                <th>incarnation</th>
                <th>operation</th>
                <th>status</th>
                <th>hosts changed / failed / all</th>
                <th>duration</th>
                <th>started</th>
              </tr>
            </thead>
            <tbody>
              {o.last_runs.map((r) => (
                <tr key={r.apply_id} data-run={r.apply_id}>
                  <td>
                    <Link href={runHref(r)}>{r.apply_id}</Link>
                  </td>
                  <td>{r.incarnation}</td>
                  <td>{r.operation}</td>
                  <td>
                    <StatusBadge status={r.status} />
                  </td>
                  <td>
                    {r.hosts_changed} / {r.hosts_failed} / {r.hosts}
                  </td>
                  <td>{seconds(r.duration_ms)}</td>
                  <td>
                    <Ago at={r.created_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <p class="muted">
            as of <time dateTime={o.generated_at}>{new Date(o.generated_at).toLocaleTimeString()}</time>
          </p>
        </>
      )}
    </section>
  );
}
