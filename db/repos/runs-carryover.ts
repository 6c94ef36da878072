// What a new run of an incarnation carries over from the runs before it: the input it runs with
// when given none, and the `onchanges:` steps a retry still owes from the locked runs it retries.
// Read from the runs tables of runs.ts; callers import these from here, not through runs.ts.
import type { Knex } from 'knex';
import { loadPlans, type RunStatus, type StepStatus } from './runs';

/**
 * The input of the incarnation's last committed run: what a run given no input runs with. An
 * upgrade takes no input, so it is looked through to the last committed run before it that had one
 * (else a run after an upgrade would fall back to every default).
 */
export async function lastCommittedInput(
  db: Knex,
  applyId: string | null,
): Promise<Record<string, unknown> | undefined> {
  if (applyId === null) return undefined;
  const row = (await db('incarnation_runs')
    .select('input', 'operation', 'incarnation', 'created_at')
    .where({ apply_id: applyId })
    .first()) as
    | { input: Record<string, unknown>; operation: string; incarnation: string; created_at: Date }
    | undefined;
  if (!row || row.operation !== 'upgrade') return row?.input;
  const before = (await db('incarnation_runs')
    .select('input')
    .where({ incarnation: row.incarnation, status: 'succeeded' })
    .whereNot('operation', 'upgrade')
    .where('created_at', '<', row.created_at)
    .orderBy('created_at', 'desc')
    .first()) as { input: Record<string, unknown> } | undefined;
  return before?.input ?? {};
}

/**
 * What a retry owes the `onchanges:` steps of the locked run(s) it retries, per host: the indexes
 * of steps (matched by name, the retry may render another commit) one of whose triggers changed
 * in a locked run while the step itself did not run after it. Walks `retry_of` back through runs
 * that failed, oldest first, so work owed across two locked runs is still owed.
 */
export async function owedOnchanges(
  db: Knex,
  retryOf: string | null,
  sids: string[],
): Promise<Map<string, Set<string>>> {
  const chain: string[] = [];
  for (let id = retryOf; id !== null && chain.length < 50; ) {
    const r = (await db('incarnation_runs').select('apply_id', 'status', 'retry_of').where({ apply_id: id }).first()) as
      | { apply_id: string; status: RunStatus; retry_of: string | null }
      | undefined;
    if (!r || r.status !== 'failed') break;
    chain.unshift(r.apply_id);
    id = r.retry_of;
  }
  const owed = new Map<string, Set<string>>();
  for (const applyId of chain) {
    const plans = await loadPlans(db, applyId, sids);
    const steps = (await db('run_steps')
      .select('sid', 'step_index', 'status', 'changed')
      .where({ apply_id: applyId })
      .whereIn('sid', sids)) as { sid: string; step_index: number; status: StepStatus; changed: boolean }[];
    for (const [sid, plan] of plans) {
      const mine = steps.filter((s) => s.sid === sid);
      const changed = new Set(mine.filter((s) => s.changed).map((s) => s.step_index));
      const ran = new Set(mine.filter((s) => s.status === 'ok' || s.status === 'changed').map((s) => s.step_index));
      const set = owed.get(sid) ?? new Set<string>();
      for (const step of plan.steps) {
        if (ran.has(step.index)) set.delete(step.name);
        else if (step.onchanges?.some((i) => changed.has(i))) set.add(step.name);
      }
      if (set.size > 0) owed.set(sid, set);
      else owed.delete(sid);
    }
  }
  return owed;
}
