// Per-host input (issue 47; docs/incarnations.md "Per-host input"), on the real stack with two real
// souls: one incarnation renders a different port for each host from its per-host input (by coven,
// then by sid), the plan shows each host's value, history records what the run used; a bad value
// is refused 400 naming the host and the field path and nothing is stored, at create and when set.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { TestKeeper } from '../support/keeper';
import { repoRoot } from '../support/repo';
import { api, gitRepoFrom, settled, startRunKeeper, startSouls, tempDir, type TestSoul } from './keeper';

describe('per-host input: by coven and by sid, over the incarnation input', function () {
  this.timeout(300_000);
  let k: TestKeeper;
  let root: string;
  let plain: TestSoul;
  let blue: TestSoul;
  const read = (soul: TestSoul, name: string) => fs.readFileSync(path.join(root, soul.sid, name), 'utf8');
  const runs = async () => (await api(k, 'GET', '/v1/incarnations/shop/runs')).body.items?.length ?? 0;

  before(async () => {
    root = tempDir('host-input-');
    const url = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'inputs'),
      path.join(root, 'inputs.git'),
      'v1',
    );
    k = await startRunKeeper();
    [plain, blue] = (await startSouls(k, path.join(root, 'souls'), [['web'], ['web', 'blue']])) as [TestSoul, TestSoul];
    assert.equal((await api(k, 'POST', '/v1/services', { name: 'inputs', git: url, ref: 'v1' })).status, 201);
  });
  after(async () => {
    await Promise.all([plain?.run.kill(), blue?.run.kill()]);
    await k?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('a bad per-host value at create is a 400 naming the host and the field; nothing is stored', async () => {
    const bad = await api(k, 'POST', '/v1/incarnations', {
      name: 'shop',
      service: 'inputs',
      covens: ['web', 'blue'],
      input: { root },
      host_input: { hosts: { [blue.sid]: { port: 70000 } }, covens: { red: { mode: 'safe' } } },
    });
    assert.equal(bad.status, 400, JSON.stringify(bad.body));
    assert.deepEqual(bad.body.errors, [
      { path: '/body/host_input/covens/red', message: "coven red: not one of the incarnation's covens (web, blue)" },
    ]);
    const bad2 = await api(k, 'POST', '/v1/incarnations', {
      name: 'shop',
      service: 'inputs',
      covens: ['web', 'blue'],
      input: { root },
      host_input: { hosts: { [blue.sid]: { port: 70000 } }, covens: { blue: { mode: 'slow' } } },
    });
    assert.equal(bad2.status, 400, JSON.stringify(bad2.body));
    assert.deepEqual(bad2.body.errors, [
      { path: '/body/host_input/covens/blue/mode', message: 'coven blue: input.mode must be one of "fast", "safe"' },
      {
        path: `/body/host_input/hosts/${blue.sid}/port`,
        message: `host ${blue.sid}: input.port must be at most 65535, got 70000`,
      },
      {
        path: `/body/host_input/hosts/${blue.sid}/mode`,
        message: `host ${blue.sid}: input.mode must be one of "fast", "safe"`,
      },
    ]);
    assert.equal((await api(k, 'GET', '/v1/incarnations/shop')).status, 404, 'no incarnation was made');
  });

  it('two hosts of one incarnation get different content; the incarnation, the report and history show it', async () => {
    const hostInput = { covens: { blue: { mode: 'safe', port: 8081 } }, hosts: { [blue.sid]: { port: 9090 } } };
    const c = await api(k, 'POST', '/v1/incarnations', {
      name: 'shop',
      service: 'inputs',
      covens: ['web', 'blue'],
      input: { root, port: 80 },
      host_input: hostInput,
    });
    assert.equal(c.status, 202, JSON.stringify(c.body));
    const inc = await settled(k, 'shop');
    assert.equal(inc.status, 'ready', JSON.stringify(inc.last_run));
    assert.equal(read(plain, 'app.conf'), 'port=80\nmode=fast\n', 'the incarnation input');
    assert.equal(read(blue, 'app.conf'), 'port=9090\nmode=safe\n', 'its coven, then its sid');
    assert.deepEqual(inc.host_input, hostInput);
    const history = (await api(k, 'GET', '/v1/incarnations/shop/history')).body.items;
    assert.deepEqual(history.at(-1).host_input, hostInput, 'the run records the per-host input it used');
  });

  it('set with PUT: a bad value is refused naming the host and field, nothing changed; a good one shows in the plan per host', async () => {
    const before = (await api(k, 'GET', '/v1/incarnations/shop')).body;
    const n = await runs();
    const bad = await api(k, 'PUT', '/v1/incarnations/shop/host-input', {
      hosts: { [plain.sid]: { port: 'eighty' } },
    });
    assert.equal(bad.status, 400, JSON.stringify(bad.body));
    assert.deepEqual(bad.body.errors, [
      {
        path: `/body/hosts/${plain.sid}/port`,
        message: `host ${plain.sid}: input "port" must be integer, got a string`,
      },
    ]);
    const after = (await api(k, 'GET', '/v1/incarnations/shop')).body;
    assert.deepEqual(after.host_input, before.host_input, 'the per-host input is unchanged');
    assert.equal(await runs(), n, 'nothing ran');

    const set = await api(k, 'PUT', '/v1/incarnations/shop/host-input', {
      hosts: { [plain.sid]: { port: 8181 }, [blue.sid]: { greeting: null } },
    });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.deepEqual(set.body.host_input, { hosts: { [plain.sid]: { port: 8181 }, [blue.sid]: { greeting: null } } });
    assert.equal(await runs(), n, 'setting it runs nothing');

    const r = await api(k, 'POST', '/v1/incarnations/shop/plans', { operation: 'update' });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const p = (await api(k, 'GET', `${r.body.plan}?wait=60s`)).body;
    assert.equal(p.status, 'ready', JSON.stringify(p));
    const host = (soul: TestSoul) => p.hosts.find((h: any) => h.sid === soul.sid);
    assert.equal(host(plain).host_input.port, 8181, "the plan shows the plain host's own value");
    assert.equal(host(blue).host_input.port, 80, 'back to the incarnation input: its entries changed');
    assert.match(host(plain).steps[0].diff.content.unified, /-port=80\n\+port=8181\n/);
    assert.match(host(blue).steps[0].diff.content.unified, /-port=9090\n-mode=safe\n\+port=80\n\+mode=fast\n/);

    const applied = await api(k, 'POST', '/v1/incarnations/shop/runs', { plan_id: p.plan_id });
    assert.equal(applied.status, 202, JSON.stringify(applied.body));
    assert.equal((await settled(k, 'shop')).status, 'ready');
    assert.equal(read(plain, 'app.conf'), 'port=8181\nmode=fast\n');
    assert.equal(read(blue, 'app.conf'), 'port=80\nmode=fast\n');
  });
});
