// GET /v1/overview (issue 35): what the web UI opens with. One answer, aggregated in PostgreSQL
// (db/repos/overview.ts), so the landing page makes one request however large the fleet.
import {
  DRIFT_STATUSES,
  INCARNATION_STATUSES,
  readOverview,
  SOUL_STATUSES,
  type RunRow,
} from '../../db/repos/overview';
import { defineRoute } from '../route';
import { overviewSchema } from '../schemas/overview';

const iso = (d: Date | null) => (d === null ? null : new Date(d).toISOString());
const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

function runView(r: RunRow) {
  return {
    apply_id: r.apply_id,
    incarnation: r.incarnation,
    operation: r.operation,
    status: r.status,
    error: r.error,
    created_at: iso(r.created_at)!,
    finished_at: iso(r.finished_at),
    duration_ms: r.finished_at === null ? null : new Date(r.finished_at).getTime() - new Date(r.created_at).getTime(),
    hosts: r.hosts,
    hosts_changed: r.changed,
    hosts_failed: r.failed,
  };
}

export const overviewRoutes = [
  defineRoute<Record<string, never>, Record<string, never>>({
    method: 'get',
    path: '/v1/overview',
    operationId: 'getOverview',
    tag: 'Overview',
    permission: 'overview:read',
    summary: 'The fleet at a glance',
    description:
      'Souls by status with the change over the last hour, incarnations by status and drift, the locked and drifted ' +
      'incarnations with their reason, failed and recent runs, and the series of the overview charts (runs per hour by outcome, ' +
      'run duration median and p95 per day, hosts changed per run, connected souls over 24 h). Plans are not runs and are left out.',
    responses: {
      200: { description: 'the overview', schema: overviewSchema(SOUL_STATUSES, INCARNATION_STATUSES, DRIFT_STATUSES) },
    },
    async handler({ deps }) {
      const o = await readOverview(deps.runtime.db);
      return {
        status: 200,
        body: {
          generated_at: iso(o.now)!,
          souls: { total: sum(o.souls), by_status: o.souls, change_1h: o.soulsChange1h },
          incarnations: { total: sum(o.incarnations), by_status: o.incarnations, by_drift: o.drift },
          attention: o.attention.map((a) => ({
            incarnation: a.name,
            status: a.status,
            drift_status: a.drift_status,
            drifted_hosts: a.drifted_sids,
            apply_id: a.apply_id,
            reason:
              a.status === 'error_locked'
                ? (a.error ?? `locked after ${a.operation ?? 'its last run'}`)
                : a.drift_status === 'drifted'
                  ? `drifted on ${a.drifted_sids.length} host${a.drifted_sids.length === 1 ? '' : 's'}`
                  : 'the drift check failed',
          })),
          failed_runs: o.failedRuns.map(runView),
          last_runs: o.lastRuns.map(runView),
          charts: {
            runs_per_hour: o.runsPerHour.map((h) => ({ ...h, hour: iso(h.hour)! })),
            duration_per_day: o.durationPerDay.map((d) => ({ ...d, day: iso(d.day)! })),
            hosts_changed_per_run: o.hostsChanged.map((r) => ({
              apply_id: r.apply_id,
              incarnation: r.incarnation,
              created_at: iso(r.created_at)!,
              hosts: r.hosts,
              hosts_changed: r.changed,
            })),
            connected_souls: o.connected.map((c) => ({ at: iso(c.at)!, connected: c.connected })),
          },
        },
      };
    },
  }),
];
