// The numbering behind resumable run events, on the real PostgreSQL: host outcomes are numbered in
// commit order, so a reader that has seen event N has seen every event below N. Two writers race:
// the second waits for the first to commit, and gets the higher number.
import assert from 'node:assert/strict';
import knexFactory, { type Knex } from 'knex';
import { migrateLatest } from '../../db/migrate';
import { hostEventsAfter } from '../../db/repos/run-events';
import { createTestDatabase, type TestDatabase } from '../support/database';

describe('run host events are numbered in commit order (PostgreSQL)', function () {
  this.timeout(60_000);
  let tdb: TestDatabase;
  let db: Knex;

  before(async () => {
    tdb = await createTestDatabase('events');
    db = knexFactory({ client: 'pg', connection: tdb.dsn, pool: { min: 0, max: 4 } });
    await migrateLatest(db);
    await db('services').insert({ name: 'svc', git: 'file:///nowhere', ref: 'v1' });
    await db('incarnations').insert({ name: 'inc', service: 'svc', covens: ['web'], status: 'applying' });
    await db('incarnation_runs').insert({
      apply_id: 'run-1',
      incarnation: 'inc',
      operation: 'create',
      status: 'running',
      phase: 'dispatching',
    });
    await db('run_hosts').insert(['a', 'b', 'c'].map((sid) => ({ apply_id: 'run-1', sid, status: 'pending' })));
  });
  after(async () => {
    await db?.destroy();
    await tdb?.drop();
  });

  it('pending hosts have no event; a finished host gets one; an unchanged status keeps its number', async () => {
    assert.deepEqual(await hostEventsAfter(db, 'run-1', 0), []);
    await db('run_hosts').where({ apply_id: 'run-1', sid: 'a' }).update({ status: 'ok' });
    const [a] = await hostEventsAfter(db, 'run-1', 0);
    assert.equal(a!.sid, 'a');
    await db('run_hosts').where({ apply_id: 'run-1', sid: 'a' }).update({ status: 'ok', reason: null });
    assert.equal(
      (await hostEventsAfter(db, 'run-1', 0))[0]!.seq,
      a!.seq,
      'a heartbeat rewriting the same outcome is no new event',
    );
  });

  it('a second writer waits for the first to commit and numbers after it', async () => {
    const order: string[] = [];
    let releaseFirst!: () => void;
    const firstHolds = new Promise<void>((r) => {
      releaseFirst = r;
    });
    const first = db.transaction(async (trx) => {
      await trx('run_hosts').where({ apply_id: 'run-1', sid: 'b' }).update({ status: 'changed' });
      order.push('first wrote');
      await firstHolds;
      order.push('first commits');
    });
    // Let the first writer take its place before the second starts.
    while (!order.includes('first wrote')) await new Promise((r) => setTimeout(r, 10));
    const second = db('run_hosts')
      .where({ apply_id: 'run-1', sid: 'c' })
      .update({ status: 'failed' })
      .then(() => {
        order.push('second done');
      });
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(order, ['first wrote'], 'the second writer is held while the first is open');
    // A reader now sees neither: nothing of an open transaction, and nothing numbered after it.
    assert.deepEqual(
      (await hostEventsAfter(db, 'run-1', 0)).map((e) => e.sid),
      ['a'],
    );
    releaseFirst();
    await Promise.all([first, second]);
    assert.deepEqual(order, ['first wrote', 'first commits', 'second done']);
    const events = await hostEventsAfter(db, 'run-1', 0);
    assert.deepEqual(
      events.map((e) => e.sid),
      ['a', 'b', 'c'],
    );
    assert.ok(events[1]!.seq < events[2]!.seq);
    assert.deepEqual(
      (await hostEventsAfter(db, 'run-1', events[1]!.seq)).map((e) => e.sid),
      ['c'],
    );
  });
});
