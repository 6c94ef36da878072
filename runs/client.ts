// Starts the workflow of a run the API has just recorded. Workflow id = apply_id; the search
// attributes and memo make it easy to find in the Web UI. Only names travel: the input stays in
// PostgreSQL (it may name secrets), the workflow reads it through its activities.
// Each start answers the Temporal run id of the execution it started: the caller records it on the
// run's row (db/repos/run-lock.ts recordRunWorkflow), the apply_id fence's owner of the run.
import type { TemporalClientHolder } from './connection';
import { runSearchAttributes } from './search-attributes';
import { sharedQueue } from './queues';
import { incarnationRun } from './workflows/run';
import { incarnationPlan } from './workflows/plan';
import { incarnationUpgrade } from './workflows/upgrade';

export interface RunToStart {
  applyId: string;
  incarnation: string;
  operation: string;
  service: string;
  serviceRef: string;
  /** The converge run this run waits for before it takes the lock (db/repos/run-queue.ts). */
  waitsFor?: string;
  /** The plan the run applies: a waiting one checks it again when its turn comes. */
  planId?: string;
}

export { newApplyId } from './apply-id';

export class TemporalUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemporalUnavailable';
  }
}

export async function startRunWorkflow(holder: TemporalClientHolder, run: RunToStart): Promise<string> {
  const client = holder.client;
  if (!client) throw new TemporalUnavailable('the Temporal client is not connected');
  const common = {
    workflowId: run.applyId,
    taskQueue: sharedQueue(holder.taskQueue),
    typedSearchAttributes: runSearchAttributes(run),
    memo: { incarnation: run.incarnation, operation: run.operation, service: run.service, service_ref: run.serviceRef },
  };
  try {
    const handle = await client.workflow.start(incarnationRun, {
      ...common,
      requestEagerStart: true,
      args: [
        {
          applyId: run.applyId,
          incarnation: run.incarnation,
          operation: run.operation,
          ...(run.waitsFor ? { waitsFor: run.waitsFor } : {}),
          ...(run.waitsFor && run.planId ? { planId: run.planId } : {}),
        },
      ],
    });
    return handle.firstExecutionRunId;
  } catch (err) {
    throw new TemporalUnavailable(`cannot start the run's workflow: ${(err as Error).message}`);
  }
}

export async function startUpgradeWorkflow(
  holder: TemporalClientHolder,
  run: RunToStart & { toVersion: number | null; waitsFor?: string },
): Promise<string> {
  const client = holder.client;
  if (!client) throw new TemporalUnavailable('the Temporal client is not connected');
  try {
    const handle = await client.workflow.start(incarnationUpgrade, {
      workflowId: run.applyId,
      taskQueue: sharedQueue(holder.taskQueue),
      typedSearchAttributes: runSearchAttributes(run),
      memo: { incarnation: run.incarnation, operation: 'upgrade', service: run.service, service_ref: run.serviceRef },
      args: [
        {
          applyId: run.applyId,
          incarnation: run.incarnation,
          toVersion: run.toVersion,
          ...(run.waitsFor ? { waitsFor: run.waitsFor } : {}),
        },
      ],
    });
    return handle.firstExecutionRunId;
  } catch (err) {
    throw new TemporalUnavailable(`cannot start the upgrade workflow: ${(err as Error).message}`);
  }
}

/** Starts a plan's workflow (workflow id = plan_id); the plan row is already recorded. */
export async function startPlanWorkflow(holder: TemporalClientHolder, plan: RunToStart): Promise<string> {
  const client = holder.client;
  if (!client) throw new TemporalUnavailable('the Temporal client is not connected');
  try {
    const handle = await client.workflow.start(incarnationPlan, {
      workflowId: plan.applyId,
      taskQueue: sharedQueue(holder.taskQueue),
      typedSearchAttributes: runSearchAttributes(plan),
      memo: {
        incarnation: plan.incarnation,
        operation: plan.operation,
        service: plan.service,
        service_ref: plan.serviceRef,
        kind: 'plan',
      },
      args: [{ planId: plan.applyId, incarnation: plan.incarnation, operation: plan.operation }],
    });
    return handle.firstExecutionRunId;
  } catch (err) {
    throw new TemporalUnavailable(`cannot start the plan's workflow: ${(err as Error).message}`);
  }
}
