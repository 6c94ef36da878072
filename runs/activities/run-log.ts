// One structured log line when a run or plan starts and one when it ends (issue 31, "Audit"), each
// with its apply_id, so a keeper's log can be read run by run and joined with the activity stream
// and the Temporal UI. Only ids, names, the status and the error summary: never input or output.
import { actorKindOf } from '../../db/repos/activity';
import { getRun } from '../../db/repos/runs';
import type { SharedActivityDeps } from './deps';

export async function logRunEdge(deps: SharedActivityDeps, applyId: string, edge: 'started' | 'ended'): Promise<void> {
  const r = await getRun(deps.db, applyId);
  if (!r) return;
  const fields = {
    apply_id: r.apply_id,
    kind: r.kind,
    incarnation: r.incarnation,
    operation: r.operation,
    created_by: r.created_by,
    started_by: actorKindOf(r.created_by),
    ...(edge === 'ended'
      ? {
          status: r.status,
          error: r.error,
          ms: r.finished_at ? r.finished_at.getTime() - r.created_at.getTime() : null,
        }
      : {}),
  };
  deps.log.info(`${r.kind} ${edge}`, fields);
}
