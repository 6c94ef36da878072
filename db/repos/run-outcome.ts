// The two ways a run ends, each one database transaction fenced by the run's apply_id:
// commit (state + history snapshot + `ready` + run succeeded) or lock (`error_locked` + run failed,
// the incarnation's state untouched). Both are safe to retry: a second call finds the lock gone.
import { isDeepStrictEqual } from 'node:util';
import type { Knex } from 'knex';
import { commitState, getIncarnation, lockIncarnation, removeIncarnation } from './incarnations';
import { finishRun, getRun, hostCounts } from './runs';
import { settlePendingHosts } from './pending-hosts';
import { passLock } from './run-queue';

/** The operation whose committed run removes the incarnation. */
export const DESTROY = 'destroy';

/** The run's row does not exist (its incarnation was deleted). */
export class RunMissing extends Error {
  constructor(readonly applyId: string) {
    super(`run ${applyId} no longer exists`);
    this.name = 'RunMissing';
  }
}

export async function commitRun(db: Knex, applyId: string): Promise<boolean> {
  return db.transaction(async (trx) => {
    const run = await getRun(trx, applyId);
    if (!run) throw new RunMissing(applyId);
    if (run.status !== 'running') return run.status === 'succeeded';
    const inc = await getIncarnation(trx, run.incarnation);
    if (!inc) throw new RunMissing(applyId);
    const changes = (run.state_changes ?? {}) as { sets?: Record<string, unknown>; state_schema_version?: number };
    const state = { ...inc.state, ...(changes.sets ?? {}) };
    // The first run fixes the schema version the state is written in; later ones keep it (only
    // upgrade moves it, interface spec 9.4).
    const version = inc.state_schema_version ?? changes.state_schema_version ?? null;
    const hosts = await hostCounts(trx, applyId);
    const stateChanged = !isDeepStrictEqual(state, inc.state) || inc.last_committed_apply_id === null;
    const ok = await commitState(trx, inc.name, applyId, {
      operation: run.operation,
      state,
      stateSchemaVersion: version,
      serviceCommit: run.service_commit,
      serviceVersion: run.service_ref,
      snapshot: stateChanged,
    });
    if (!ok) {
      await finishRun(trx, applyId, {
        status: 'failed',
        error: 'the run no longer held the incarnation lock; nothing was committed',
        summary: { hosts },
      });
      await passLock(trx, inc.name, applyId);
      return false;
    }
    // A committed `destroy` is the incarnation's end (DELETE /v1/incarnations/{name}): the record
    // leaves the lists in the same transaction, its runs and history stay readable.
    const removed =
      run.operation === DESTROY &&
      (await removeIncarnation(trx, inc.name, { applyId, by: run.created_by ?? undefined, forced: false }));
    // Within its failure budget a run commits with failed or unknown hosts: they stay pending for
    // the incarnation until a run applies to them (docs/runs.md "Failure budget").
    const pending = removed ? 0 : await settlePendingHosts(trx, inc.name, applyId);
    await finishRun(trx, applyId, {
      status: 'succeeded',
      summary: {
        hosts,
        changed: hosts.changed > 0,
        state_changed: stateChanged,
        ...(pending > 0 ? { pending_hosts: pending } : {}),
        ...(removed ? { removed: true } : {}),
      },
    });
    // An operator's run waiting for this one (a converge run) takes the lock now (db/repos/run-queue.ts).
    await passLock(trx, inc.name, applyId);
    return true;
  });
}

export async function lockRun(db: Knex, applyId: string, reason: string, phase: string): Promise<void> {
  await db.transaction(async (trx) => {
    const run = await getRun(trx, applyId);
    if (!run) throw new RunMissing(applyId);
    if (run.status !== 'running') return;
    // Hosts never reached are not successes: say so in the report. (A `pending` host with a reason
    // was never targeted: registered, not yet onboarded.)
    await trx('run_hosts')
      .where({ apply_id: applyId, status: 'pending' })
      .whereNull('reason')
      .update({ status: 'unknown', reason: 'not dispatched' });
    await lockIncarnation(trx, run.incarnation, applyId);
    await finishRun(trx, applyId, {
      status: 'failed',
      error: reason,
      summary: { hosts: await hostCounts(trx, applyId), failed_phase: phase },
    });
    // A run waiting for this one ends failed: the incarnation is locked (db/repos/run-queue.ts).
    await passLock(trx, run.incarnation, applyId);
  });
}
