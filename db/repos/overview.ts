// The fleet overview (GET /v1/overview, issue 35): one read that answers "is my fleet healthy right
// now?". Every figure is aggregated in PostgreSQL (counts, buckets, percentiles) so the answer costs
// the same few index scans for ten souls or ten thousand; only plans are left out (kind 'run').
import type { Knex } from 'knex';

export const SOUL_STATUSES = ['pending', 'connected', 'disconnected', 'revoked'] as const;
export const INCARNATION_STATUSES = ['ready', 'applying', 'error_locked'] as const;
export const DRIFT_STATUSES = ['in_sync', 'drifted', 'unchecked', 'check_failed'] as const;

export interface AttentionRow {
  name: string;
  status: string;
  drift_status: string;
  drifted_sids: string[];
  apply_id: string | null;
  operation: string | null;
  error: string | null;
  finished_at: Date | null;
}
export interface RunRow {
  apply_id: string;
  incarnation: string;
  operation: string;
  status: string;
  error: string | null;
  created_at: Date;
  finished_at: Date | null;
  hosts: number;
  changed: number;
  failed: number;
}
export interface Overview {
  now: Date;
  souls: Record<string, number>;
  soulsChange1h: Record<string, number>;
  incarnations: Record<string, number>;
  drift: Record<string, number>;
  attention: AttentionRow[];
  failedRuns: RunRow[];
  lastRuns: RunRow[];
  runsPerHour: { hour: Date; succeeded: number; failed: number; running: number }[];
  durationPerDay: { day: Date; runs: number; median_ms: number; p95_ms: number }[];
  hostsChanged: RunRow[];
  connected: { at: Date; connected: number }[];
}

const zeros = (keys: readonly string[]) => Object.fromEntries(keys.map((k) => [k, 0])) as Record<string, number>;
const rowsOf = <T>(r: { rows: T[] }) => r.rows;

// A run with its host counts; the counts read the run's own rows of run_hosts (its primary key).
const RUN_COLUMNS = `r.apply_id, r.incarnation, r.operation, r.status, r.error, r.created_at, r.finished_at,
  h.hosts, h.changed, h.failed`;
const RUN_HOSTS = `cross join lateral (
  select count(*)::int as hosts, (count(*) filter (where status = 'changed'))::int as changed,
    (count(*) filter (where status = 'failed'))::int as failed
  from run_hosts rh where rh.apply_id = r.apply_id) h`;

export async function readOverview(
  db: Knex,
  limits = { attention: 50, runs: 10, changed: 30, days: 14 },
): Promise<Overview> {
  // One snapshot for all the statements, so the pictures agree with each other.
  return db.transaction(
    async (trx) => {
      const now = rowsOf<{ now: Date }>(await trx.raw('select now() as now'))[0].now;
      const souls = zeros(SOUL_STATUSES);
      for (const r of rowsOf<{ status: string; n: number }>(
        await trx.raw('select status, count(*)::int as n from souls group by status'),
      ))
        souls[r.status] = r.n;
      // The change over the last hour: what entered a status minus what left it (soul_status_changes).
      const soulsChange1h = zeros(SOUL_STATUSES);
      for (const r of rowsOf<{ status: string; n: number }>(
        await trx.raw(
          `
      select s.status, (count(*) filter (where c.to_status = s.status) - count(*) filter (where c.from_status = s.status))::int as n
      from soul_status_changes c cross join unnest(?::text[]) as s(status)
      where c.at > now() - interval '1 hour' and (c.to_status = s.status or c.from_status = s.status)
      group by s.status`,
          [SOUL_STATUSES as unknown as string[]],
        ),
      ))
        soulsChange1h[r.status] = r.n;
      const incarnations = zeros(INCARNATION_STATUSES);
      const drift = zeros(DRIFT_STATUSES);
      for (const r of rowsOf<{ status: string; drift_status: string; n: number }>(
        await trx.raw(
          'select status, drift_status, count(*)::int as n from incarnations group by status, drift_status',
        ),
      )) {
        incarnations[r.status] = (incarnations[r.status] ?? 0) + r.n;
        drift[r.drift_status] = (drift[r.drift_status] ?? 0) + r.n;
      }
      const attention = rowsOf<AttentionRow>(
        await trx.raw(
          `
      select i.name, i.status, i.drift_status, i.drifted_sids, r.apply_id, r.operation, r.error, r.finished_at
      from incarnations i left join incarnation_runs r on r.apply_id = i.last_apply_id
      where i.status = 'error_locked' or i.drift_status in ('drifted', 'check_failed')
      order by i.status = 'error_locked' desc, i.name collate keeper_natural limit ?`,
          [limits.attention],
        ),
      );
      const failedRuns = rowsOf<RunRow>(
        await trx.raw(
          `
      select ${RUN_COLUMNS} from incarnation_runs r ${RUN_HOSTS}
      where r.kind = 'run' and r.status = 'failed' and r.created_at > now() - interval '24 hours'
      order by r.created_at desc limit ?`,
          [limits.attention],
        ),
      );
      const lastRuns = rowsOf<RunRow>(
        await trx.raw(
          `
      select ${RUN_COLUMNS} from (select * from incarnation_runs where kind = 'run' order by created_at desc limit ?) r ${RUN_HOSTS}
      order by r.created_at desc`,
          [limits.runs],
        ),
      );
      // Hours are counted back from now (bucket 0 = the last 60 minutes), so every bar is a full hour.
      const runsPerHour = rowsOf<Overview['runsPerHour'][number]>(
        await trx.raw(`
      with b as (
        select floor(extract(epoch from now() - created_at) / 3600)::int as k, status from incarnation_runs
        where kind = 'run' and created_at > now() - interval '24 hours')
      select now() - make_interval(hours => k + 1) as hour,
        (select count(*) from b where b.k = g.k and status = 'succeeded')::int as succeeded,
        (select count(*) from b where b.k = g.k and status = 'failed')::int as failed,
        (select count(*) from b where b.k = g.k and status = 'running')::int as running
      from generate_series(23, 0, -1) as g(k)`),
      );
      const durationPerDay = rowsOf<Overview['durationPerDay'][number]>(
        await trx.raw(
          `
      with d as (
        select date_trunc('day', created_at, 'UTC') as day, extract(epoch from finished_at - created_at) * 1000 as ms
        from incarnation_runs
        where kind = 'run' and finished_at is not null and created_at >= date_trunc('day', now(), 'UTC') - make_interval(days => ? - 1))
      select day, count(*)::int as runs,
        round(percentile_cont(0.5) within group (order by ms))::int as median_ms,
        round(percentile_cont(0.95) within group (order by ms))::int as p95_ms
      from d group by day order by day`,
          [limits.days],
        ),
      );
      const hostsChanged = rowsOf<RunRow>(
        await trx.raw(
          `
      select ${RUN_COLUMNS} from (select * from incarnation_runs where kind = 'run' and finished_at is not null order by created_at desc limit ?) r ${RUN_HOSTS}
      order by r.created_at`,
          [limits.changed],
        ),
      );
      // Connected souls at each hour of the last day: connected now, minus who connected since, plus who left.
      const connected = rowsOf<{ at: Date; connected: number }>(
        await trx.raw(`
      select p.t as at, ((select count(*) from souls where status = 'connected')
        - (select count(*) from soul_status_changes c where c.at > p.t and c.to_status = 'connected')
        + (select count(*) from soul_status_changes c where c.at > p.t and c.from_status = 'connected'))::int as connected
      from (select now() - make_interval(hours => k) as t from generate_series(24, 0, -1) as g(k)) p`),
      );
      return {
        now,
        souls,
        soulsChange1h,
        incarnations,
        drift,
        attention,
        failedRuns,
        lastRuns,
        runsPerHour,
        durationPerDay,
        hostsChanged,
        connected,
      };
    },
    { isolationLevel: 'repeatable read', readOnly: true },
  );
}
