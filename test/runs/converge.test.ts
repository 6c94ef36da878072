// New hosts converge (issue 17, item 5), on the real stack with real souls: a soul onboarded into
// coven `web` after the web incarnation is `ready` gets that incarnation's last operation, on itself
// alone, as a run with its own report; the incarnation of coven `db` and the hosts that already had
// the run are untouched.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import knex from 'knex';
import type { TestKeeper } from '../support/keeper';
import { repoRoot } from '../support/repo';
import { soulRun, waitFor } from '../agents/harness';
import { api, gitRepoFrom, settled, startRunKeeper, startSouls, stopRunRig, tempDir, type TestSoul } from './keeper';

describe('runs: a new soul converges to the ready incarnations of its covens', function () {
  this.timeout(240_000);
  let k: TestKeeper;
  let root: string;
  const souls: TestSoul[] = [];

  before(async () => {
    root = tempDir('converge-');
    const url = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'note'),
      path.join(root, 'note.git'),
      'v1',
    );
    k = await startRunKeeper();
    souls.push(...(await startSouls(k, path.join(root, 'souls'), [['web'], ['db']])));
    assert.equal((await api(k, 'POST', '/v1/services', { name: 'note', git: url, ref: 'v1' })).status, 201);
  });
  after(() => stopRunRig({ souls, k, root }));

  const runsOf = async (name: string) => (await api(k, 'GET', `/v1/incarnations/${name}/runs`)).body.items as any[];

  it("runs the web incarnation's last operation on the new web soul only; the db incarnation is untouched", async () => {
    for (const [name, coven] of [
      ['conv-web', 'web'],
      ['conv-db', 'db'],
    ] as const) {
      const r = await api(k, 'POST', '/v1/incarnations', {
        name,
        service: 'note',
        covens: [coven],
        input: { root, greeting: `hello ${coven}` },
      });
      assert.equal(r.status, 202, JSON.stringify(r.body));
      assert.equal((await settled(k, name)).status, 'ready');
    }
    const [web1] = souls as [TestSoul, TestSoul];
    const before = fs.statSync(path.join(root, web1.sid, 'motd')).mtimeMs;

    const [web2] = await startSouls(k, path.join(root, 'souls-new'), [['web']]);
    souls.push(web2!);
    const converge = await waitFor(
      'a converge run of conv-web on the new soul',
      async () =>
        (await runsOf('conv-web')).find((r) => Array.isArray(r.target_sids) && r.target_sids.includes(web2!.sid)),
      30_000,
      200,
    );
    assert.deepEqual(converge.target_sids, [web2!.sid]);
    assert.equal(converge.operation, 'create', 'the last committed operation');
    assert.match(converge.apply_id, /^conv-web\.create\./);
    const inc = await settled(k, 'conv-web');
    assert.equal(inc.status, 'ready');

    const report = (await api(k, 'GET', `/v1/incarnations/conv-web/runs/${converge.apply_id}`)).body;
    assert.equal(report.status, 'succeeded');
    assert.deepEqual(
      report.hosts.map((h: any) => h.sid),
      [web2!.sid],
      'the run went to the new soul alone',
    );
    assert.equal(report.input.greeting, 'hello web', 'with the last committed input');
    assert.equal(fs.readFileSync(path.join(root, web2!.sid, 'motd'), 'utf8'), 'hello web\n');
    assert.equal(
      fs.statSync(path.join(root, web1.sid, 'motd')).mtimeMs,
      before,
      'the host that had the run was not sent it again',
    );

    // Only those: the db incarnation got no run, and the new soul is not converged twice.
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal((await runsOf('conv-db')).length, 1);
    assert.equal((await runsOf('conv-web')).length, 2);
    assert.ok(!fs.existsSync(path.join(root, web2!.sid, 'motd.db')));
  });

  it('a soul that restarts is not a new host: nothing is started for it', async () => {
    // The original web soul reconnecting (a restart of `soul run`) converged when it first came.
    const [web1] = souls as [TestSoul];
    await web1.run.kill();
    web1.run = soulRun(web1.sid, web1.config);
    await waitFor(
      'the web soul connected again',
      async () => (await api(k, 'GET', `/v1/souls/${web1.sid}`)).body.status === 'connected',
      20_000,
      200,
    );
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal((await runsOf('conv-web')).length, 2);
  });

  it('PATCH covens: a coven gained converges like a new soul; a coven lost reports the incarnations left', async () => {
    const web2 = souls[2]!;
    const bad = await api(k, 'PATCH', `/v1/souls/${web2.sid}`, { covens: ['Not A Label'] });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errors[0].path, '/body/covens/0');
    const gain = await api(k, 'PATCH', `/v1/souls/${web2.sid}`, { covens: ['web', 'db'] });
    assert.equal(gain.status, 200, JSON.stringify(gain.body));
    assert.deepEqual(
      [gain.body.gained_covens, gain.body.lost_covens, gain.body.converging, gain.body.left_incarnations],
      [['db'], [], true, []],
    );
    assert.deepEqual(gain.body.soul.covens, ['web', 'db']);
    const run = await waitFor(
      'a converge run of conv-db on the soul that joined db',
      async () =>
        (await runsOf('conv-db')).find((r) => Array.isArray(r.target_sids) && r.target_sids.includes(web2.sid)),
      30_000,
      200,
    );
    assert.equal((await settled(k, 'conv-db')).status, 'ready');
    assert.equal((await api(k, 'GET', `/v1/incarnations/conv-db/runs/${run.apply_id}`)).body.status, 'succeeded');
    assert.equal(
      fs.readFileSync(path.join(root, web2.sid, 'motd'), 'utf8'),
      'hello db\n',
      'the db note was written on it',
    );
    await new Promise((r) => setTimeout(r, 2000));
    assert.equal((await runsOf('conv-web')).length, 2, 'the web incarnation it already had is not run again');

    const lose = await api(k, 'PATCH', `/v1/souls/${web2.sid}`, { covens: ['db'] });
    assert.equal(lose.status, 200);
    assert.deepEqual(
      [lose.body.gained_covens, lose.body.lost_covens, lose.body.converging, lose.body.left_incarnations],
      [[], ['web'], false, ['conv-web']],
    );
    assert.equal((await api(k, 'PATCH', '/v1/souls/nobody.keeper.test', { covens: ['web'] })).status, 404);
  });

  it('a soul that is a host of the run in flight converges during that run, not after it', async () => {
    const url = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'lifecycle'),
      path.join(root, 'lifecycle.git'),
      'v1',
    );
    assert.equal((await api(k, 'POST', '/v1/services', { name: 'lifecycle', git: url, ref: 'v1' })).status, 201);
    const [held] = await startSouls(k, path.join(root, 'souls-held'), [['held']]);
    souls.push(held!);
    // `stall` keeps the greeting step retrying on that host for 20 s: the run stays in flight.
    const r = await api(k, 'POST', '/v1/incarnations', {
      name: 'conv-held',
      service: 'lifecycle',
      covens: ['held'],
      input: { root, greeting: 'hi', stall: held!.sid },
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    await waitFor(
      'the stalled step to reach the soul',
      async () => fs.existsSync(path.join(root, held!.sid, 'motd')),
      30_000,
      100,
    );
    // Gaining a coven makes the soul a new host again while the run it is a host of is in flight.
    const gain = await api(k, 'PATCH', `/v1/souls/${held!.sid}`, { covens: ['held', 'held-more'] });
    assert.equal(gain.status, 200, JSON.stringify(gain.body));
    assert.equal(gain.body.converging, true);
    const db = knex({ client: 'pg', connection: k.db.dsn, pool: { min: 0, max: 1 } });
    try {
      await waitFor(
        'the soul converged',
        async () => {
          const row = await db('souls').select('converged_at').where({ sid: held!.sid }).first();
          return row?.converged_at != null;
        },
        10_000,
        100,
      );
    } finally {
      await db.destroy();
    }
    assert.equal(
      (await api(k, 'GET', '/v1/incarnations/conv-held')).body.status,
      'applying',
      'converged while the run was still in flight',
    );
    // The run fails on its stalled step; the soul is not sent a converge run of its own.
    assert.equal((await settled(k, 'conv-held', 60_000)).status, 'error_locked');
    await new Promise((res) => setTimeout(res, 2000));
    assert.deepEqual(
      (await runsOf('conv-held')).map((x) => x.target_sids ?? null),
      [null],
    );
  });
});
