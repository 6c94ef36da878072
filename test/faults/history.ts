// The history checker: after a fault scenario, what the database, the souls' ledgers and the files on
// the hosts say must be one consistent story. Read from the sources themselves, not the API, so a
// fault that left the API lying is caught too:
//   - each (run, host, step) took effect at most once: one ledger record per step key, at most one
//     `changed` record per step of a run (its `until` re-sends confirm, they do not change again);
//   - no run is committed (incarnation_history) while one of its hosts is failed, unknown or pending;
//   - no incarnation is left `applying` once its runs are over (nothing running behind it);
//   - every run has ended, and its incarnation is `ready` or `error_locked` with a reason;
//   - a succeeded run's files are on every host, with the content the steps wrote.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import knexFactory from 'knex';

export interface CheckedSoul {
  sid: string;
  dir: string;
}
export interface LedgerLine {
  apply_id: string;
  index: number;
  changed: boolean;
  ok: boolean;
}

/** Every record of a run in a soul's ledger (the run's own key and its `until` re-sends). */
export function ledgerLines(soul: CheckedSoul, applyId: string): LedgerLine[] {
  const dir = path.join(soul.dir, 'seed', 'ledger');
  if (!fs.existsSync(dir)) return [];
  return (
    fs
      .readdirSync(dir)
      .filter((f) => f === `${applyId}.jsonl` || f.startsWith(`${applyId}:u`))
      .flatMap((f) =>
        fs
          .readFileSync(path.join(dir, f), 'utf8')
          .split('\n')
          .filter((l) => l.trim() !== ''),
      )
      // A torn last line (a process killed mid-append) is what the soul itself ignores on replay.
      .flatMap((l) => {
        try {
          return [JSON.parse(l) as LedgerLine];
        } catch {
          return [];
        }
      })
  );
}

export interface HistoryReport {
  runs: Array<{ apply_id: string; incarnation: string; status: string; error: string | null }>;
  incarnations: Array<{ name: string; status: string }>;
}

/**
 * Checks everything above for every run in the keeper's database. Step i of a host writes
 * <input.root>/<sid>/f<i> (test/faults/rig.ts). Returns what it read, for the scenario's own assertions.
 */
export async function checkHistory(dsn: string, souls: CheckedSoul[]): Promise<HistoryReport> {
  const db = knexFactory({ client: 'pg', connection: dsn, pool: { min: 0, max: 1 } });
  try {
    const runs = await db('incarnation_runs')
      .select('apply_id', 'incarnation', 'status', 'error', 'input')
      .orderBy('created_at');
    const incarnations = await db('incarnations').select('name', 'status', 'current_apply_id', 'last_apply_id');
    const hosts = await db('run_hosts').select('apply_id', 'sid', 'status', 'reason');
    const steps = await db('run_steps').select('apply_id', 'sid', 'step_index', 'status');
    const commits = (await db('incarnation_history').select('apply_id')).map((r: any) => r.apply_id as string);
    const committed = new Set(commits);
    // A retried commit (its activity run again after the database came back) must not add a second row.
    assert.deepEqual(
      commits.filter((a, i) => commits.indexOf(a) !== i),
      [],
      'a run committed twice',
    );

    for (const r of runs) assert.notEqual(r.status, 'running', `run ${r.apply_id} never ended`);
    for (const i of incarnations) {
      assert.notEqual(
        i.status,
        'applying',
        `incarnation ${i.name} left applying with no run in flight (current ${i.current_apply_id})`,
      );
      assert.ok(['ready', 'error_locked'].includes(i.status), `incarnation ${i.name}: ${i.status}`);
      if (i.status === 'error_locked') {
        const last = runs.find((r: any) => r.apply_id === i.last_apply_id);
        const reasons = hosts.filter((h: any) => h.apply_id === i.last_apply_id && h.reason).map((h: any) => h.reason);
        assert.ok(
          last?.error || reasons.length > 0,
          `incarnation ${i.name} is error_locked without a reason (run ${i.last_apply_id})`,
        );
      }
    }
    for (const applyId of committed) {
      const bad = hosts.filter((h: any) => h.apply_id === applyId && !['ok', 'changed', 'skipped'].includes(h.status));
      assert.deepEqual(bad, [], `run ${applyId} was committed with hosts not done`);
      assert.equal(
        runs.find((r: any) => r.apply_id === applyId)?.status,
        'succeeded',
        `run ${applyId} committed but not succeeded`,
      );
    }
    for (const r of runs) {
      for (const s of souls) {
        const lines = ledgerLines(s, r.apply_id);
        const counts = new Map<string, number>();
        for (const l of lines)
          counts.set(`${l.apply_id}#${l.index}`, (counts.get(`${l.apply_id}#${l.index}`) ?? 0) + 1);
        assert.deepEqual(
          [...counts].filter(([, c]) => c > 1),
          [],
          `${s.sid}: a step key of run ${r.apply_id} recorded more than once`,
        );
        const changedPerStep = new Map<number, number>();
        for (const l of lines) if (l.changed) changedPerStep.set(l.index, (changedPerStep.get(l.index) ?? 0) + 1);
        assert.deepEqual(
          [...changedPerStep].filter(([, c]) => c > 1),
          [],
          `${s.sid}: a step of run ${r.apply_id} took effect more than once`,
        );
      }
      if (r.status === 'succeeded') {
        for (const st of steps.filter((x: any) => x.apply_id === r.apply_id)) {
          assert.ok(
            ['ok', 'changed', 'skipped'].includes(st.status),
            `succeeded run ${r.apply_id} has step ${st.sid}#${st.step_index} ${st.status}`,
          );
          const soul = souls.find((s) => s.sid === st.sid);
          if (soul)
            assert.equal(
              fs.readFileSync(path.join(r.input.root, st.sid, `f${st.step_index}`), 'utf8'),
              `f${st.step_index} on ${st.sid}\n`,
            );
        }
      }
    }
    return { runs, incarnations };
  } finally {
    await db.destroy();
  }
}
