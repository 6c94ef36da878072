// Which souls a run targets (db/repos/targets.ts), the one rule the run service's pre-check and
// render both ask, against a real PostgreSQL database: onboarded and not revoked; a soul never
// onboarded or revoked is reported with why, and a soul onboarded again after a revocation is back.
import assert from 'node:assert/strict';
import type { Knex } from 'knex';
import { connectDb } from '../../db/connect';
import { migrateLatest } from '../../db/migrate';
import { markOnboarded, registerSoul, revokeSoul } from '../../db/repos/souls';
import { NOT_ONBOARDED, REVOKED, runTargets } from '../../db/repos/targets';
import { createTestDatabase, type TestDatabase } from '../support/database';

const DAY = 24 * 3600_000;

describe('db/repos/targets: the souls a run targets', function () {
  let tdb: TestDatabase;
  let db: Knex;

  before(async () => {
    tdb = await createTestDatabase('targets');
    db = connectDb(tdb.dsn, { poolMax: 5 });
    await migrateLatest(db);
    for (const sid of ['a.example.com', 'b.example.com', 'new.example.com', 'other.example.com']) {
      await registerSoul(
        db,
        { sid, transport: 'agent', covens: sid === 'other.example.com' ? ['db'] : ['web'] },
        { tokenTtlMs: DAY },
      );
    }
    for (const sid of ['a.example.com', 'b.example.com', 'other.example.com'])
      await markOnboarded(db, sid, `serial-${sid}`);
  });
  after(async () => {
    await db?.destroy();
    await tdb?.drop();
  });

  it('targets the onboarded souls of the covens and reports one never onboarded', async () => {
    const { targets, notTargeted } = await runTargets(db, ['web']);
    assert.deepEqual(
      targets.map((t) => t.sid),
      ['a.example.com', 'b.example.com'],
    );
    assert.deepEqual(notTargeted, [{ sid: 'new.example.com', reason: NOT_ONBOARDED }]);
  });

  it('leaves a revoked soul out with the reason, and takes it back once onboarded again', async () => {
    await revokeSoul(db, 'b.example.com');
    const after = await runTargets(db, ['web']);
    assert.deepEqual(
      after.targets.map((t) => t.sid),
      ['a.example.com'],
    );
    assert.deepEqual(after.notTargeted, [
      { sid: 'b.example.com', reason: REVOKED },
      { sid: 'new.example.com', reason: NOT_ONBOARDED },
    ]);
    await revokeSoul(db, 'a.example.com');
    assert.deepEqual(
      (await runTargets(db, ['web'])).targets,
      [],
      'a pre-check finds no host to target: the run is refused',
    );
    await markOnboarded(db, 'b.example.com', 'serial-again');
    assert.deepEqual(
      (await runTargets(db, ['web'])).targets.map((t) => t.sid),
      ['b.example.com'],
    );
  });
});
