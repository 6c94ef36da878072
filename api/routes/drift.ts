// PUT /v1/incarnations/{name}/drift-check (docs/drift.md): turn an incarnation's scheduled drift
// check on (an interval), change it, or off (null); `auto_repair` applies a drifted check's plan at
// once. The setting is stored first and the Temporal Schedule made to match; if Temporal does not
// answer, the previous setting is put back and the answer is 503, so the row and the schedule agree.
import { setDriftCheck } from '../../db/repos/drift';
import { lastRunOf } from '../../db/repos/runs';
import { setDriftSchedule, type TemporalClientHolder } from '../../runs/index';
import type { ApiDeps } from '../deps';
import { problems } from '../problems';
import { defineRoute } from '../route';
import { incarnationSchema, nameParams } from '../schemas/incarnations';
import { driftCheckBody, type DriftCheckInput } from '../schemas/drift';
import { versionFacts, view } from './incarnations';
import { mustIncarnation } from './run-start';

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3600_000, d: 86_400_000 };
/** A check plans every host of the incarnation: more often than this would keep the fleet busy checking. */
export const MIN_DRIFT_INTERVAL_MS = 2000;
export const MAX_DRIFT_INTERVAL_MS = 30 * 86_400_000;

/** The Temporal client the schedules are set with; 503 when it is not connected. */
function scheduler(deps: ApiDeps): TemporalClientHolder {
  const t = deps.runs.temporal;
  if (!t?.client) throw problems.temporal();
  return t;
}

/** Best effort when the incarnation goes away: a schedule left behind finds nothing and skips. */
export async function dropDriftSchedule(deps: ApiDeps, name: string): Promise<void> {
  try {
    await setDriftSchedule(scheduler(deps), name, null);
  } catch (err) {
    deps.runtime.log.warn('could not delete the drift check schedule; it will skip', {
      incarnation: name,
      error: (err as Error).message,
    });
  }
}

export const driftRoutes = [
  defineRoute<{ name: string }, Record<string, never>, DriftCheckInput>({
    method: 'put',
    path: '/v1/incarnations/{name}/drift-check',
    operationId: 'setDriftCheck',
    tag: 'Incarnations',
    permission: 'incarnations:drift',
    summary: 'Schedule drift checks',
    description:
      "Every `interval` the keeper plans the incarnation's last committed operation with its last committed input and records, per host, whether it still matches " +
      "(`drift` on the incarnation; the diffs are in the plan `drift.plan_id`). `auto_repair: true` applies a drifted check's plan at once. `interval: null` turns checks off.",
    params: nameParams,
    body: { schema: driftCheckBody, required: true },
    responses: { 200: { description: 'the incarnation with its drift settings', schema: incarnationSchema } },
    async handler({ params, body, deps }) {
      const holder = scheduler(deps);
      if (body.interval !== null) {
        const m = /^([0-9]{1,7})(s|m|h|d)$/.exec(body.interval)!;
        const ms = Number(m[1]) * UNIT_MS[m[2]!]!;
        if (ms < MIN_DRIFT_INTERVAL_MS || ms > MAX_DRIFT_INTERVAL_MS) {
          throw problems.invalid(`interval ${body.interval} is outside 2s..30d`, [
            { path: '/body/interval', message: 'must be between 2s and 30d' },
          ]);
        }
      }
      const before = await mustIncarnation(deps, params.name);
      const autoRepair = body.auto_repair ?? false;
      await setDriftCheck(deps.runtime.db, before.name, { interval: body.interval, autoRepair });
      try {
        await setDriftSchedule(holder, before.name, body.interval);
      } catch {
        await setDriftCheck(deps.runtime.db, before.name, {
          interval: before.drift_interval,
          autoRepair: before.drift_auto_repair,
        });
        throw problems.temporal();
      }
      const inc = await mustIncarnation(deps, params.name);
      return {
        status: 200,
        body: view(deps, inc, await lastRunOf(deps.runtime.db, inc.name), await versionFacts(deps, [inc])),
      };
    },
  }),
];
