// `loop:` end to end with the real engine and a real soul (test/fixtures/services/loop): one file per
// list item, each a step named `<task>[<i>]` in the run report and the plan; the registered list read
// by a later task's apply-time `when:`; an item added later changes one file only; a run with the
// same input is a no-op (the onchanges: step skipped).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../support/repo';
import type { TestKeeper } from '../support/keeper';
import { api, gitRepoFrom, settled, startRunKeeper, startSouls, tempDir, type TestSoul } from './keeper';

describe('loop: on a task, applied by a real soul', function () {
  this.timeout(300_000);
  let k: TestKeeper;
  let root: string;
  let soul: TestSoul;
  const two = [
    { name: 'api', port: 8081 },
    { name: 'web', port: 8082 },
  ];
  const three = [...two, { name: 'admin', port: 8083 }];
  const sites = () => fs.readdirSync(path.join(root, soul.sid, 'sites')).sort();
  const site = (name: string) => fs.readFileSync(path.join(root, soul.sid, 'sites', name), 'utf8');
  const steps = async (applyId: string) => {
    const rep = (await api(k, 'GET', `/v1/incarnations/lp/runs/${applyId}`)).body;
    return rep.hosts[0].steps.map((s: any) => [s.index, s.name, s.status, s.skip_reason ?? null]);
  };
  const run = async (input: Record<string, unknown>) => {
    const r = await api(k, 'POST', '/v1/incarnations/lp/runs', { operation: 'create', input });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal((await settled(k, 'lp')).status, 'ready');
    return r.body.apply_id as string;
  };

  before(async () => {
    root = tempDir('runs-loop-');
    const url = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'loop'),
      path.join(root, 'loop.git'),
      'v1',
    );
    k = await startRunKeeper();
    [soul] = (await startSouls(k, path.join(root, 'souls'), [['web']])) as [TestSoul];
    assert.equal((await api(k, 'POST', '/v1/services', { name: 'loop', git: url, ref: 'v1' })).status, 201);
  });
  after(async () => {
    await soul?.run.kill();
    await k?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('creates one file per item, each its own step, and the onchanges: step reads the registered list', async () => {
    const r = await api(k, 'POST', '/v1/incarnations', {
      name: 'lp',
      service: 'loop',
      covens: ['web'],
      input: { root, upstreams: two },
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal((await settled(k, 'lp')).status, 'ready');
    assert.deepEqual(sites(), ['0-api.conf', '1-web.conf']);
    assert.equal(site('1-web.conf'), `# site 1 on ${soul.sid}\nupstream web { server 127.0.0.1:8082; }\n`);
    assert.deepEqual(await steps(r.body.apply_id), [
      [0, 'site[0]', 'changed', null],
      [1, 'site[1]', 'changed', null],
      [2, 'reloaded', 'changed', null],
    ]);
    assert.equal(fs.readFileSync(path.join(root, soul.sid, 'reloaded'), 'utf8'), 'changed: 2\n');
  });

  it('a plan with one more item shows exactly that file as a change', async () => {
    const p = await api(k, 'POST', '/v1/incarnations/lp/plans', {
      operation: 'create',
      input: { root, upstreams: three },
    });
    assert.equal(p.status, 202, JSON.stringify(p.body));
    const got = (await api(k, 'GET', `${p.body.plan}?wait=60s`)).body;
    assert.equal(got.status, 'ready', JSON.stringify(got));
    const hs = got.hosts[0].steps;
    assert.deepEqual(
      hs.map((s: any) => [s.name, s.would_change]),
      [
        ['site[0]', false],
        ['site[1]', false],
        ['site[2]', true],
        ['reloaded', true],
      ],
    );
    assert.match(hs[2].diff.content.unified, /\+upstream admin \{ server 127\.0\.0\.1:8083; \}/);
    assert.deepEqual(sites(), ['0-api.conf', '1-web.conf'], 'a plan writes nothing');
  });

  it('an added item changes its file only; the same input again is a no-op', async () => {
    const added = await run({ root, upstreams: three });
    assert.deepEqual(await steps(added), [
      [0, 'site[0]', 'ok', null],
      [1, 'site[1]', 'ok', null],
      [2, 'site[2]', 'changed', null],
      [3, 'reloaded', 'changed', null],
    ]);
    assert.deepEqual(sites(), ['0-api.conf', '1-web.conf', '2-admin.conf']);
    assert.equal(fs.readFileSync(path.join(root, soul.sid, 'reloaded'), 'utf8'), 'changed: 3\n');
    const again = await run({ root, upstreams: three });
    assert.deepEqual(await steps(again), [
      [0, 'site[0]', 'ok', null],
      [1, 'site[1]', 'ok', null],
      [2, 'site[2]', 'ok', null],
      [3, 'reloaded', 'skipped', 'onchanges'],
    ]);
  });
});
