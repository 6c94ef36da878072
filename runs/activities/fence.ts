// The apply_id fence on the activity side (db/repos/run-lock.ts, issue 28 item 7): which workflow
// execution is asking, taken from what Temporal tells the activity (its info), never from the
// input, which whoever started the workflow chose. A shard of a large batch (runs/workflows/run.ts,
// workflow id `<apply_id>-b<n>-s<m>`) acts for its parent: Temporal is asked who that parent is.
import { Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import { checkRunHoldsLock, checkRunWorkflow, type WorkflowExecution } from '../../db/repos/run-lock';
import { NotLockHolder } from './errors';

/** The workflow id of a shard of run `applyId` (the format runs/workflows/run.ts gives its children). */
export function isShardOf(workflowId: string, applyId: string): boolean {
  return workflowId.startsWith(`${applyId}-b`) && /^-b\d+-s\d+$/.test(workflowId.slice(applyId.length));
}

// A shard's parent does not change; its dispatch and routing activities ask several times.
const parents = new Map<string, WorkflowExecution | null>();
const PARENTS_KEPT = 1000;

async function shardParent(ctx: Context, exec: WorkflowExecution): Promise<WorkflowExecution | null> {
  const key = `${exec.workflowId}/${exec.runId}`;
  if (parents.has(key)) return parents.get(key)!;
  const d = await ctx.client.workflow.getHandle(exec.workflowId, exec.runId).describe();
  const p = d.parentExecution;
  const parent = p?.workflowId && p.runId ? { workflowId: p.workflowId, runId: p.runId } : null;
  if (parents.size >= PARENTS_KEPT) parents.delete(parents.keys().next().value!);
  parents.set(key, parent);
  return parent;
}

/** The execution a run activity acts for: its own workflow's, or a shard's parent's. */
export async function actingExecution(applyId: string): Promise<WorkflowExecution> {
  const ctx = Context.current();
  const exec = ctx.info.workflowExecution;
  if (!exec) throw NotLockHolder(`run ${applyId}: an activity outside a workflow may not act for a run`);
  if (!isShardOf(exec.workflowId, applyId)) return { workflowId: exec.workflowId, runId: exec.runId };
  const parent = await shardParent(ctx, exec);
  if (!parent)
    throw NotLockHolder(
      `workflow ${exec.workflowId} has no parent; a shard of run ${applyId} is started by the run's own workflow only`,
    );
  return parent;
}

/**
 * Every run activity first: the run holds its incarnation's lock (or is a plan, or already ended,
 * as `opts` allow), and the asking execution is the run's own (`claim`: the first activity takes
 * an unclaimed run). Refused: NotLockHolder, not retried, and nothing was changed.
 */
export async function fenceRun(
  db: Knex,
  applyId: string,
  opts: { finished?: 'allow' | 'refuse'; plan?: 'allow' | 'refuse'; claim?: boolean } = {},
): Promise<void> {
  const lock = await checkRunHoldsLock(db, applyId, opts);
  if (!lock.ok) throw NotLockHolder(lock.reason);
  const own = await checkRunWorkflow(db, applyId, await actingExecution(applyId), { claim: opts.claim ?? false });
  if (!own.ok) throw NotLockHolder(own.reason);
}
