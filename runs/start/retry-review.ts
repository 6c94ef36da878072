// A retry after a refused plan needs a plan (issue 30). A run that applied a plan and found a host
// changed since that plan was refused so that someone reviews what would happen to that edit; a
// plain retry renders afresh and applies at once, overwriting the edit unreviewed. So the retry is
// refused (409) unless the caller asks for exactly that with `force_render`; the way forward is a
// new plan (docs/plans.md "Drift since the plan").
import { runReport, type RunRecord } from '../../db/repos/runs';
import type { RunServiceDeps } from './context';
import { refuse } from './outcome';

/** The reason dispatch records on a host refused for drift (runs/activities/dispatch.ts). */
const DRIFT = 'drift since plan ';

export async function refuseUnreviewedRetry(
  deps: RunServiceDeps,
  incarnation: string,
  failed: Pick<RunRecord, 'apply_id' | 'plan_id' | 'operation'>,
): Promise<void> {
  if (!failed.plan_id) return;
  const drifted = (await runReport(deps.db, failed.apply_id)).hosts
    .filter((h) => h.reason?.startsWith(DRIFT))
    .map((h) => h.sid);
  if (drifted.length === 0) return;
  throw refuse.conflict(
    `run ${failed.apply_id} applied plan ${failed.plan_id} and refused ${drifted.length} host(s) changed since the plan (${drifted.slice(0, 5).join(', ')}${drifted.length > 5 ? ', ...' : ''}); ` +
      'a retry would apply a fresh render nobody reviewed. Unlock (POST .../unlock without retry), make a new plan of ' +
      `${failed.operation} (keeperctl run ${incarnation} ${failed.operation} --plan shows its diff and applies it), or retry with "force_render": true`,
  );
}
