// The migration that purges what earlier keepers stored (db/migrations/20261126100001_step_secrets.ts,
// issue 28): a database at the schema before it, seeded with the leak as the old code wrote it (run 1
// wrote a file with a secret marker; a later plan of plain text over the same path kept the secret
// as the old content of its unified diff, with plain hashes; the run refused for drift quoted that
// diff), is migrated; then no row holds the secret or a plain hash, a file that never held a secret
// keeps its unified diff, and the rows say which path each step managed and whether it carried one.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { pgDump } from './leaks';

const MIGRATION = '20261126100001_step_secrets.js';

describe('migration 20261126100001: the diffs and hashes that leaked are purged', function () {
  this.timeout(120_000);
  const CANARY = `canary-purge-${randomBytes(12).toString('hex')}`;
  const secretFile = `[db]\npassword = ${CANARY}\n`;
  const plainHash = createHash('sha256').update(secretFile).digest('hex');
  const notesHash = createHash('sha256').update('first\n').digest('hex');
  let tdb: TestDatabase;
  let db: Knex;
  const config = {
    directory: path.join(__dirname, '..', '..', 'db', 'migrations'),
    loadExtensions: ['.js'],
    tableName: 'knex_migrations',
  };

  before(async () => {
    tdb = await createTestDatabase('purge');
    db = knexFactory({ client: 'pg', connection: tdb.dsn, pool: { min: 0, max: 2 } });
    for (;;) {
      const [, pending] = (await db.migrate.list(config)) as [unknown[], { file: string }[]];
      assert.ok(
        pending.some((p) => p.file === MIGRATION),
        'the migration exists',
      );
      if (pending[0]!.file === MIGRATION) break;
      await db.migrate.up(config);
    }
  });
  after(async () => {
    await db?.destroy();
    await tdb?.drop();
  });

  it('clears the secret and plain hashes from every row, keeps the diff of a file that never held one', async () => {
    const conf = '/srv/app/h1/app.conf';
    const notes = '/srv/app/h1/notes.txt';
    const marker = `«secret:secret/keeper/services/x/db#password@${randomBytes(12).toString('hex')}»`;
    const runs = [
      ['leak.create.1', 'run', '2026-11-01T00:00:00Z'],
      ['leak.update.plan.2', 'plan', '2026-11-02T00:00:00Z'],
      ['leak.update.3', 'run', '2026-11-03T00:00:00Z'],
    ];
    for (const [apply_id, kind, created_at] of runs) {
      await db('incarnation_runs').insert({
        apply_id,
        incarnation: 'leak',
        operation: 'x',
        status: 'succeeded',
        phase: 'done',
        kind,
        created_at,
      });
    }
    const steps = (content: string) =>
      JSON.stringify([
        {
          index: 0,
          name: 'app config',
          module: 'core.file.rendered',
          params: { path: `${conf.replace('/app.conf', '//app.conf')}`, content, mode: '0600' },
        },
        { index: 1, name: 'notes', module: 'core.file.present', params: { path: notes, content: 'second\n' } },
      ]);
    await db('run_plans').insert([
      { apply_id: 'leak.create.1', sid: 'h1', steps: steps(`[db]\npassword = ${marker}\n`) },
      { apply_id: 'leak.update.plan.2', sid: 'h1', steps: steps('plain = one\n') },
      { apply_id: 'leak.update.3', sid: 'h1', steps: steps('plain = one\n') },
    ]);
    const leakedDiff = {
      content: {
        before: { sha256: plainHash, size: secretFile.length },
        after: { sha256: 'a'.repeat(64), size: 12 },
        unified: `--- a${conf}\n+++ b${conf}\n@@ -1,2 +1,1 @@\n-[db]\n-password = ${CANARY}\n+plain = one\n`,
      },
    };
    const notesDiff = {
      content: {
        before: { sha256: notesHash, size: 6 },
        after: { sha256: 'b'.repeat(64), size: 7 },
        unified: '@@ -1,1 +1,1 @@\n-first\n+second\n',
      },
    };
    const row = (apply_id: string, step_index: number, diff: unknown) => ({
      apply_id,
      sid: 'h1',
      step_index,
      name: step_index === 0 ? 'app config' : 'notes',
      module: 'core.file.present',
      status: 'changed',
      changed: true,
      diff: JSON.stringify(diff),
    });
    await db('run_steps').insert([
      row('leak.create.1', 0, { created: true, content: { after: { sha256: plainHash, size: secretFile.length } } }),
      row('leak.update.plan.2', 0, leakedDiff),
      row('leak.update.plan.2', 1, notesDiff),
      row('leak.update.3', 0, {
        content: {
          before: { sha256: plainHash, size: secretFile.length },
          after: { sha256: 'a'.repeat(64), size: 12 },
        },
      }),
    ]);
    await db('run_hosts').insert({
      apply_id: 'leak.update.3',
      sid: 'h1',
      status: 'failed',
      reason: `drift since plan leak.update.plan.2: step 0 (app config): the plan saw ${JSON.stringify(leakedDiff)}, now nothing; nothing was applied on this host`,
    });
    const before = await pgDump(tdb.dsn);
    assert.ok(before.includes(CANARY) && before.includes(plainHash), 'the leak is seeded');

    await db.migrate.up(config);

    const after = await pgDump(tdb.dsn);
    assert.ok(!after.includes(CANARY), 'the canary is gone from every row');
    assert.ok(!after.includes(plainHash) && !after.includes(notesHash), 'no plain hash is left');
    const rows = await db('run_steps')
      .select('apply_id', 'step_index', 'path', 'secret', 'diff')
      .orderBy(['apply_id', 'step_index']);
    assert.deepEqual(
      rows.map((r) => [r.apply_id, r.step_index, r.path, r.secret, r.diff === null]),
      [
        ['leak.create.1', 0, conf, true, true],
        ['leak.update.3', 0, conf, false, true],
        ['leak.update.plan.2', 0, conf, false, true],
        ['leak.update.plan.2', 1, notes, false, false],
      ],
    );
    const kept = rows.find((r) => r.path === notes).diff;
    assert.equal(
      kept.content.unified,
      '@@ -1,1 +1,1 @@\n-first\n+second\n',
      'a file that never held a secret keeps its diff',
    );
    assert.deepEqual(kept.content.before, { size: 6 });
    const host = await db('run_hosts').where({ apply_id: 'leak.update.3' }).first();
    assert.match(
      host.reason,
      /^drift since plan leak\.update\.plan\.2: the host no longer matched the plan \(the details were removed: they could show a secret\); nothing was applied on this host$/,
    );
  });
});
