// A module shipped with a service (test/fixtures/services/kvmod, modules/kv) applied by a real soul
// over real runs: the plan shows the program's own dry-run diff and changes nothing, a run changes
// the file, the same run again is a no-op, a cached program tampered with on the host is not run
// (it is written again from the step's copy), and the protocol's timeout and output cap stop a
// program that breaks them (docs/state-modules.md, "modules shipped with a service").
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../support/repo';
import type { TestKeeper } from '../support/keeper';
import { api, gitRepoFrom, settled, startRunKeeper, startSouls, tempDir, type TestSoul } from './keeper';

describe('a module shipped with a service, applied by a real soul', function () {
  this.timeout(300_000);
  let k: TestKeeper;
  let root: string;
  let soul: TestSoul;
  const fixture = path.join(repoRoot(), 'test', 'fixtures', 'services', 'kvmod');
  const sha = createHash('sha256')
    .update(fs.readFileSync(path.join(fixture, 'modules', 'kv', 'kv.js')))
    .digest('hex');
  const env = () => fs.readFileSync(path.join(root, soul.sid, 'app.env'), 'utf8');
  const cached = () => path.join(soul.dir, 'modules', sha);
  const report = async (name: string, applyId: string) =>
    (await api(k, 'GET', `/v1/incarnations/${name}/runs/${applyId}`)).body;
  const run = async (input: Record<string, unknown>) => {
    const r = await api(k, 'POST', '/v1/incarnations/kv/runs', { operation: 'create', input });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal((await settled(k, 'kv')).status, 'ready');
    return (await report('kv', r.body.apply_id)).hosts[0].steps[0];
  };

  before(async () => {
    root = tempDir('runs-svcmod-');
    const url = gitRepoFrom(fixture, path.join(root, 'kvmod.git'), 'v1');
    k = await startRunKeeper();
    [soul] = (await startSouls(k, path.join(root, 'souls'), [['web']])) as [TestSoul];
    assert.equal((await api(k, 'POST', '/v1/services', { name: 'kvmod', git: url, ref: 'v1' })).status, 201);
  });
  after(async () => {
    await soul?.run.kill();
    await k?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('creates: the soul caches the program by its hash and runs it', async () => {
    const r = await api(k, 'POST', '/v1/incarnations', {
      name: 'kv',
      service: 'kvmod',
      covens: ['web'],
      input: { root, port: 8080 },
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal((await settled(k, 'kv')).status, 'ready');
    const step = (await report('kv', r.body.apply_id)).hosts[0].steps[0];
    assert.deepEqual(
      [step.name, step.module, step.status, step.output],
      ['port', 'kvmod.kv.present', 'changed', 'set port to 8080'],
    );
    assert.equal(env(), 'port=8080\n');
    assert.equal(
      fs.readFileSync(cached(), 'utf8'),
      fs.readFileSync(path.join(fixture, 'modules', 'kv', 'kv.js'), 'utf8'),
    );
  });

  it("a plan shows the program's dry-run diff and changes nothing; the run applies it; the same run again is a no-op", async () => {
    const p = await api(k, 'POST', '/v1/incarnations/kv/plans', { operation: 'create', input: { root, port: 9090 } });
    assert.equal(p.status, 202, JSON.stringify(p.body));
    const plan = (await api(k, 'GET', `${p.body.plan}?wait=60s`)).body;
    assert.equal(plan.status, 'ready', JSON.stringify(plan));
    const [port, slow, chatty] = plan.hosts[0].steps;
    assert.deepEqual(
      [port.would_change, port.output, port.diff],
      [true, 'would set port to 9090', { key: 'port', from: '8080', to: '9090' }],
    );
    assert.deepEqual([slow.skip_reason, chatty.skip_reason], ['when', 'when']);
    assert.equal(env(), 'port=8080\n', 'a plan changes nothing');

    const applied = await run({ root, port: 9090 });
    assert.deepEqual(
      [applied.status, applied.output, applied.diff],
      ['changed', 'set port to 9090', { key: 'port', from: '8080', to: '9090' }],
    );
    assert.equal(env(), 'port=9090\n');
    const again = await run({ root, port: 9090 });
    assert.deepEqual([again.status, again.changed, again.output], ['ok', false, 'port is 9090']);
  });

  it("a cached program tampered with on the host is not run: it is written again from the step's copy", async () => {
    const marker = path.join(root, 'tampered-program-ran');
    fs.writeFileSync(cached(), `#!/bin/sh\ntouch ${marker}\necho '{"changed": false, "output": "tampered"}'\n`);
    const step = await run({ root, port: 7070 });
    assert.equal(step.status, 'changed');
    assert.equal(
      step.output,
      `the cached program ${cached()} failed its check (its sha256 no longer matches): it was not run, and was written again from the keeper's copy\nset port to 7070`,
    );
    assert.equal(fs.existsSync(marker), false);
    assert.equal(env(), 'port=7070\n');
    assert.equal(createHash('sha256').update(fs.readFileSync(cached())).digest('hex'), sha);
  });

  it('a program past its timeout, and one writing past the output cap, is stopped and fails its step', async () => {
    for (const [name, mode, why] of [
      ['slow', 'slow', 'the module program ran past its timeout of 1000 ms and was stopped'],
      ['chatty', 'chatty', 'the module program wrote more than 65536 bytes to stdout and was stopped'],
    ] as const) {
      const r = await api(k, 'POST', '/v1/incarnations', {
        name: `kv-${name}`,
        service: 'kvmod',
        covens: ['web'],
        input: { root: path.join(root, name), misbehave: mode },
      });
      assert.equal(r.status, 202, JSON.stringify(r.body));
      assert.notEqual((await settled(k, `kv-${name}`)).status, 'ready');
      const steps = (await report(`kv-${name}`, r.body.apply_id)).hosts[0].steps;
      const step = steps.find((s: any) => s.name === name);
      assert.deepEqual([step.status, step.output], ['failed', why]);
    }
  });
});
