// The keeper's two Temporal workers, as one keeper Component:
//  - shared queue (config.temporal.task_queue): the run workflows and the render, routing, commit
//    and upgrade activities; any keeper may take them.
//  - own queue (`<task_queue>-<kid>`): only the dispatch activity, bound to this keeper's live soul
//    sessions, so a step is always sent by the keeper that holds the soul's stream.
import { type NativeConnection, Worker, type WorkerOptions as WorkerCreateOptions } from '@temporalio/worker';
import type { Logger } from '../common/logger';
import { createDispatchActivities } from './activities/dispatch';
import { withKeeperErrors } from './activities/keeper-errors';
import type { DispatchActivityDeps, SharedActivityDeps } from './activities/deps';
import { createSharedActivities } from './activities/shared';
import { createExecutionDispatchActivities, createExecutionSharedActivities } from './activities/execute';
import type { Component } from '../platform/component';
import { workflowBundle } from './bundle';
import { dispatchQueue, sharedQueue } from './queues';
import type { TemporalClientHolder } from './connection';

/**
 * Workflow runs the shared worker keeps in its sticky cache (in the workflow thread's V8 heap, not
 * the main heap that `keeper_heap_after_full_gc_bytes` measures). The SDK's default grows with the
 * heap limit (about 600 per GiB: 2,310 on a 4 GiB heap), so a keeper given more memory would keep
 * more runs for ever; a fixed bound keeps its footprint independent of the host. 500 is well above
 * the runs in flight at once (one workflow per run, plus a child per 500 hosts of a large batch,
 * docs/performance.md "How cost grows"); a run evicted past it is replayed from its history when it
 * next has work, which costs CPU, not correctness (docs/performance.md "bench/soak").
 */
export const MAX_CACHED_WORKFLOWS = 500;

export interface WorkerOptions {
  /** The keeper's Temporal connection (runs/connection.ts): the workers start once it is open. */
  temporal: TemporalClientHolder;
  namespace: string;
  taskQueue: string;
  kid: string;
  log: Logger;
  shared: SharedActivityDeps;
  /** Absent on a keeper that holds no soul streams (then it only runs workflows and shared activities). */
  dispatch?: DispatchActivityDeps;
}

/** The shared queue's worker: the run workflows (with their cache bound) and the shared activities. */
export function sharedWorkerOptions(
  opts: Pick<WorkerOptions, 'namespace' | 'taskQueue' | 'kid' | 'shared'>,
  bundle: { code: string },
) {
  return {
    namespace: opts.namespace,
    taskQueue: sharedQueue(opts.taskQueue),
    workflowBundle: bundle,
    maxCachedWorkflows: MAX_CACHED_WORKFLOWS,
    // Every activity error names this keeper (activities/keeper-errors.ts, issue 33).
    activities: withKeeperErrors(opts.kid, {
      ...createSharedActivities(opts.shared),
      ...createExecutionSharedActivities(opts.shared),
    }),
    identity: `keeper-${opts.kid}-shared`,
  } satisfies Omit<WorkerCreateOptions, 'connection'>;
}

export function temporalWorkersComponent(opts: WorkerOptions): Component {
  const workers: Worker[] = [];
  const running: Promise<void>[] = [];
  let stopped = false;
  let starting: Promise<void> = Promise.resolve();

  async function startOn(connection: NativeConnection): Promise<void> {
    const bundle = await workflowBundle();
    if (stopped) return;
    workers.push(await Worker.create({ connection, ...sharedWorkerOptions(opts, bundle) }));
    if (opts.dispatch && !stopped) {
      workers.push(
        await Worker.create({
          connection,
          namespace: opts.namespace,
          taskQueue: dispatchQueue(opts.taskQueue, opts.kid),
          activities: withKeeperErrors(opts.kid, {
            ...createDispatchActivities(opts.dispatch),
            ...createExecutionDispatchActivities(opts.dispatch),
          }),
          identity: `keeper-${opts.kid}-dispatch`,
        }),
      );
    }
    if (stopped) return; // stop() shuts down what was created; nothing is run
    for (const w of workers) {
      running.push(
        w
          .run()
          .catch((err: Error) =>
            opts.log.error('temporal worker stopped', { task_queue: w.options.taskQueue, error: err.message }),
          ),
      );
    }
    opts.log.info('temporal workers started', { queues: workers.map((w) => w.options.taskQueue) });
  }

  return {
    name: 'temporal workers',
    async start() {
      // Connected at start: the workers start now, and a failure stops the keeper's start as before.
      // Temporal away at start (runs/connection.ts): they start when the keeper connects.
      if (opts.temporal.connection) {
        starting = startOn(opts.temporal.connection);
        await starting;
        return;
      }
      opts.temporal.whenConnected((connection) => {
        starting = startOn(connection).catch((err: Error) =>
          opts.log.error('temporal workers could not start; runs wait for a keeper with workers', {
            error: err.message,
          }),
        );
      });
    },
    async stop() {
      stopped = true;
      await starting.catch(() => undefined);
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await Promise.all(running);
    },
  };
}
