// Inputs changed one at a time, and input schemas that reach inside (issue 30; docs/runs.md "Input:
// one key at a time", docs/scenario.md "Input schemas"), on the real stack with a real soul: one key
// given, the rest kept, and the plan shows only that key's effect; `null` puts an optional input
// back to its default; `replace` is the whole input; a bad nested item is refused 400 with its path
// and nothing is recorded; a retry after a plan found drift needs a new plan or force_render; the
// version shows the schema.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { TestKeeper } from '../support/keeper';
import { repoRoot } from '../support/repo';
import { api, gitRepoFrom, settled, startRunKeeper, startSouls, tempDir, type TestSoul } from './keeper';

describe('inputs: one key at a time, schemas that reach inside', function () {
  this.timeout(300_000);
  let k: TestKeeper;
  let root: string;
  let soul: TestSoul;
  const read = (name: string) => fs.readFileSync(path.join(root, soul.sid, name), 'utf8');
  const upstreams = [
    { host: 'a.example', port: 81 },
    { host: 'b.example', port: 82 },
    { host: 'c.example', port: 83 },
  ];
  const runs = async () => (await api(k, 'GET', '/v1/incarnations/shop/runs')).body.items.length;
  const run = async (body: Record<string, unknown>) => {
    const r = await api(k, 'POST', '/v1/incarnations/shop/runs', { operation: 'update', ...body });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal((await settled(k, 'shop')).status, 'ready');
    return (await api(k, 'GET', r.body.run)).body;
  };

  before(async () => {
    root = tempDir('inputs-');
    const url = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'inputs'),
      path.join(root, 'inputs.git'),
      'v1',
    );
    k = await startRunKeeper();
    [soul] = (await startSouls(k, path.join(root, 'souls'), [['web']])) as [TestSoul];
    assert.equal((await api(k, 'POST', '/v1/services', { name: 'inputs', git: url, ref: 'v1' })).status, 201);
    const c = await api(k, 'POST', '/v1/incarnations', {
      name: 'shop',
      service: 'inputs',
      covens: ['web'],
      input: { root, port: 80, greeting: 'welcome', mode: 'safe', upstreams },
    });
    assert.equal(c.status, 202, JSON.stringify(c.body));
    assert.equal((await settled(k, 'shop')).status, 'ready');
  });
  after(async () => {
    await soul?.run.kill();
    await k?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("one key changed: the rest kept (the three upstreams too), and the plan shows only that key's effect", async () => {
    const r = await api(k, 'POST', '/v1/incarnations/shop/plans', { operation: 'update', input: { port: 8080 } });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const p = (await api(k, 'GET', `${r.body.plan}?wait=60s`)).body;
    assert.equal(p.status, 'ready', JSON.stringify(p));
    assert.deepEqual(p.input, { root, port: 8080, greeting: 'welcome', mode: 'safe', upstreams });
    const [conf, motd] = p.hosts[0].steps;
    assert.deepEqual([conf.would_change, motd.would_change], [true, false], 'the motd keeps its greeting');
    assert.match(
      conf.diff.content.unified,
      /\n-port=80\n\+port=8080\n mode=safe\n$/,
      'mode stays safe, not its default',
    );
    assert.equal(p.summary.would_change, 1);

    const applied = await api(k, 'POST', '/v1/incarnations/shop/runs', { plan_id: p.plan_id });
    assert.equal(applied.status, 202, JSON.stringify(applied.body));
    const inc = await settled(k, 'shop');
    assert.deepEqual([inc.status, inc.state], ['ready', { port: 8080, mode: 'safe', upstreams }]);
    assert.deepEqual([read('app.conf'), read('motd')], ['port=8080\nmode=safe\n', 'welcome\n']);

    // A run (not a plan) merges the same way, and its report shows the merged input.
    const report = await run({ input: { mode: 'fast' } });
    assert.deepEqual(report.input, { root, port: 8080, greeting: 'welcome', mode: 'fast', upstreams });
    assert.deepEqual(
      report.hosts[0].steps.map((s: any) => s.status),
      ['changed', 'ok'],
    );
    assert.equal(read('app.conf'), 'port=8080\nmode=fast\n');
  });

  it('null puts an optional input back to its default; a required one is refused; replace is the whole input', async () => {
    const reset = await run({ input: { greeting: null } });
    assert.equal('greeting' in reset.input, false);
    assert.equal(read('motd'), 'hello\n', 'the default greeting');
    assert.equal(read('app.conf'), 'port=8080\nmode=fast\n', 'the other keys kept');

    const before = await runs();
    const missing = await api(k, 'POST', '/v1/incarnations/shop/runs', { operation: 'update', input: { root: null } });
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body.errors, [
      { path: '/body/input/root', message: 'input "root" is required and has no default' },
    ]);
    assert.equal(await runs(), before, 'nothing recorded');

    const replaced = await run({ input: { root, port: 81 }, input_mode: 'replace' });
    assert.deepEqual(replaced.input, { root, port: 81 });
    const inc = (await api(k, 'GET', '/v1/incarnations/shop')).body;
    assert.deepEqual(
      inc.state,
      { port: 81, mode: 'fast', upstreams: [{ host: 'a.example', port: 81 }] },
      'the defaults, as before merging existed',
    );
  });

  it('a bad item inside a list is refused 400 naming its path; nothing is recorded', async () => {
    const before = { runs: await runs(), inc: (await api(k, 'GET', '/v1/incarnations/shop')).body };
    const bad = await api(k, 'POST', '/v1/incarnations/shop/runs', {
      operation: 'update',
      input: { upstreams: [...upstreams.slice(0, 2), { host: 'c.example' }] },
    });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.errors, [
      { path: '/body/input/upstreams/2/port', message: 'input.upstreams[2].port is required' },
    ]);
    assert.match(bad.body.detail, /input\.upstreams\[2\]\.port is required/);

    const many = await api(k, 'POST', '/v1/incarnations/shop/plans', {
      operation: 'update',
      input: { mode: 'slow', port: 0, upstreams: [{ host: 'Bad Host', port: 70000 }] },
    });
    assert.equal(many.status, 400);
    assert.deepEqual(many.body.errors.map((e: any) => e.path).sort(), [
      '/body/input/mode',
      '/body/input/port',
      '/body/input/upstreams/0/host',
      '/body/input/upstreams/0/port',
    ]);
    assert.ok(
      many.body.errors.some((e: any) => e.message === 'input.mode must be one of "fast", "safe"'),
      JSON.stringify(many.body.errors),
    );
    assert.ok(!JSON.stringify(many.body).includes('Bad Host'), 'a value breaking a pattern is not quoted back');

    const after = (await api(k, 'GET', '/v1/incarnations/shop')).body;
    assert.equal(await runs(), before.runs);
    assert.deepEqual([after.status, after.apply_id, after.state], ['ready', before.inc.apply_id, before.inc.state]);
    assert.equal(
      (await api(k, 'GET', '/v1/incarnations/shop/plans')).body.items.length,
      1,
      'no plan recorded for the refused one',
    );
  });

  it('a retry after a plan found drift is refused without a new plan or force_render, and the edit stays', async () => {
    const r = await api(k, 'POST', '/v1/incarnations/shop/plans', { operation: 'update', input: { port: 82 } });
    const p = (await api(k, 'GET', `${r.body.plan}?wait=60s`)).body;
    assert.equal(p.status, 'ready', JSON.stringify(p));
    fs.writeFileSync(path.join(root, soul.sid, 'app.conf'), 'edited by hand\n');
    const applied = await api(k, 'POST', '/v1/incarnations/shop/runs', { plan_id: p.plan_id });
    assert.equal(applied.status, 202, JSON.stringify(applied.body));
    assert.equal((await settled(k, 'shop')).status, 'error_locked');
    const before = await runs();

    const retry = await api(k, 'POST', '/v1/incarnations/shop/unlock', { retry: true });
    assert.equal(retry.status, 409);
    assert.match(
      retry.body.detail,
      new RegExp(
        `applied plan ${p.plan_id.replace(/\./g, '\\.')} and refused 1 host\\(s\\) changed since the plan \\(${soul.sid.replace(/\./g, '\\.')}\\); a retry would apply a fresh render nobody reviewed`,
      ),
    );
    assert.match(retry.body.detail, /keeperctl run shop update --plan/);
    assert.equal(
      (await api(k, 'POST', '/v1/incarnations/shop/unlock', { retry: true, input: { port: 83 } })).status,
      409,
      'new input is no review either',
    );
    assert.equal(read('app.conf'), 'edited by hand\n', 'the edit was not overwritten');
    assert.equal((await api(k, 'GET', '/v1/incarnations/shop')).body.status, 'error_locked');
    assert.equal(await runs(), before, 'no run started');

    const forced = await api(k, 'POST', '/v1/incarnations/shop/unlock', { retry: true, force_render: true });
    assert.equal(forced.status, 202, JSON.stringify(forced.body));
    assert.equal((await settled(k, 'shop')).status, 'ready');
    assert.equal(read('app.conf'), 'port=82\nmode=fast\n', 'the operator asked for the fresh render');
    assert.equal(await runs(), before + 1);
  });

  it("the version shows each input's schema", async () => {
    const v = (await api(k, 'GET', '/v1/services/inputs/versions/v1')).body;
    const inputs = v.operations.find((o: any) => o.name === 'update').inputs;
    const ups = inputs.find((i: any) => i.name === 'upstreams');
    assert.deepEqual(ups.schema, {
      type: 'list',
      items: {
        type: 'map',
        required: ['host', 'port'],
        properties: {
          host: { type: 'string', pattern: '^[a-z0-9.-]+$' },
          port: { type: 'integer', minimum: 1, maximum: 65535 },
        },
      },
    });
    assert.deepEqual(inputs.find((i: any) => i.name === 'mode').schema, { type: 'string', enum: ['fast', 'safe'] });
    assert.equal(
      'schema' in inputs.find((i: any) => i.name === 'greeting'),
      false,
      'a bare type has no schema to show',
    );
  });
});
