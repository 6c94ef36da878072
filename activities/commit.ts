// The two ways a run ends, each one database transaction fenced by the run's apply_id:
// commit (state + history snapshot + `ready` + run succeeded) or lock (`error_locked` + run failed,
// the incarnation's state untouched). Both are safe to retry: a second call finds the lock gone.
import { isDeepStrictEqual } from 'node:util';
import type { Knex } from 'knex';
import { commitState, getIncarnation, lockIncarnation } from '../db/repos/incarnations';
import { finishRun, getRun, hostCounts } from '../db/repos/runs';
import { RunGone } from './errors';

export async function commitRun(db: Knex, applyId: string): Promise<boolean> {
  return db.transaction(async (trx) => {
    const run = await getRun(trx, applyId);
    if (!run) throw RunGone(applyId);
    if (run.status !== 'running') return run.status === 'succeeded';
    const inc = await getIncarnation(trx, run.incarnation);
    if (!inc) throw RunGone(applyId);
    const changes = (run.state_changes ?? {}) as { sets?: Record<string, unknown>; state_schema_version?: number };
    const state = { ...inc.state, ...(changes.sets ?? {}) };
    // The first run fixes the schema version the state is written in; later ones keep it (only
    // upgrade moves it, interface spec 9.4).
    const version = inc.state_schema_version ?? changes.state_schema_version ?? null;
    const hosts = await hostCounts(trx, applyId);
    const stateChanged = !isDeepStrictEqual(state, inc.state) || inc.last_committed_apply_id === null;
    const ok = await commitState(trx, inc.name, applyId, {
      operation: run.operation, state, stateSchemaVersion: version, serviceCommit: run.service_commit, snapshot: stateChanged,
    });
    if (!ok) {
      await finishRun(trx, applyId, { status: 'failed', error: 'the run no longer held the incarnation lock; nothing was committed', summary: { hosts } });
      return false;
    }
    await finishRun(trx, applyId, { status: 'succeeded', summary: { hosts, changed: hosts.changed > 0, state_changed: stateChanged } });
    return true;
  });
}

export async function lockRun(db: Knex, applyId: string, reason: string, phase: string): Promise<void> {
  await db.transaction(async (trx) => {
    const run = await getRun(trx, applyId);
    if (!run) throw RunGone(applyId);
    if (run.status !== 'running') return;
    // Hosts never reached are not successes: say so in the report. (A `pending` host with a reason
    // was never targeted: registered, not yet onboarded.)
    await trx('run_hosts').where({ apply_id: applyId, status: 'pending' }).whereNull('reason').update({ status: 'unknown', reason: 'not dispatched' });
    await lockIncarnation(trx, run.incarnation, applyId);
    await finishRun(trx, applyId, { status: 'failed', error: reason, summary: { hosts: await hostCounts(trx, applyId), failed_phase: phase } });
  });
}
