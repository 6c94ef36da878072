// The example service examples/app-settings, whose two modules are written in sh (modules/envfile,
// `runtime: sh`, params from KEEPER_PARAM_* variables) and JavaScript (modules/jsonfile, `runtime:
// node`, the soul's own Node.js, params from KEEPER_PARAMS_FILE), applied by a real soul through a
// real keeper: create, a plan with both programs' dry-run diffs that changes nothing, the run and a
// no-op, a failing program's own words in its step's output, and destroy
// (docs/state-modules.md, "Modules shipped with a service").
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../support/repo';
import type { TestKeeper } from '../support/keeper';
import { api, gitRepoFrom, settled, waitFor, startRunKeeper, startSouls, tempDir, type TestSoul } from './keeper';

describe('examples/app-settings: modules in sh and node, applied by a real soul', function () {
  this.timeout(300_000);
  let k: TestKeeper;
  let root: string;
  let dir: string;
  let soul: TestSoul;
  const envFile = () => fs.readFileSync(path.join(dir, 'app.env'), 'utf8');
  const settings = () => JSON.parse(fs.readFileSync(path.join(dir, 'settings.json'), 'utf8'));
  const report = async (applyId: string) => (await api(k, 'GET', `/v1/incarnations/app/runs/${applyId}`)).body;
  const steps = (rep: any) =>
    rep.hosts[0].steps.map((s: any) => [s.name, s.status, s.output]) as Array<[string, string, string]>;
  const run = async (input: Record<string, unknown>) => {
    const r = await api(k, 'POST', '/v1/incarnations/app/runs', { operation: 'create', input });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    await settled(k, 'app');
    return report(r.body.apply_id);
  };

  before(async () => {
    root = tempDir('runs-example-modules-');
    dir = path.join(root, 'etc-app');
    const url = gitRepoFrom(path.join(repoRoot(), 'examples', 'app-settings'), path.join(root, 'app.git'), 'v1');
    k = await startRunKeeper();
    [soul] = (await startSouls(k, path.join(root, 'souls'), [['web']])) as [TestSoul];
    assert.equal((await api(k, 'POST', '/v1/services', { name: 'app-settings', git: url, ref: 'v1' })).status, 201);
  });
  after(async () => {
    await soul?.run.kill();
    await k?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('creates: the sh module writes the env lines, the node module the settings file', async () => {
    const r = await api(k, 'POST', '/v1/incarnations', {
      name: 'app',
      service: 'app-settings',
      covens: ['web'],
      input: { dir, port: 8080, features: ['search'] },
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal((await settled(k, 'app')).status, 'ready');
    const rep = await report(r.body.apply_id);
    assert.deepEqual(steps(rep).slice(1), [
      ['env port', 'changed', `set PORT in ${dir}/app.env`],
      ['env log level', 'changed', `set LOG_LEVEL in ${dir}/app.env`],
      ['settings', 'changed', `set port, features in ${dir}/settings.json`],
    ]);
    assert.deepEqual(rep.hosts[0].steps[1].diff, { key: 'PORT', from: null, to: '8080' });
    assert.equal(envFile(), 'PORT=8080\nLOG_LEVEL=info\n');
    assert.deepEqual(settings(), { port: 8080, features: ['search'] });
    assert.equal(fs.statSync(path.join(dir, 'settings.json')).mode & 0o777, 0o644);
    // Each program ran from the soul's cache; its params files were removed when it ended.
    assert.deepEqual(
      fs.readdirSync(path.join(soul.dir, 'modules')).filter((f) => f.startsWith('.')),
      [],
    );
  });

  it("a plan shows both programs' dry-run diffs and changes nothing; the run applies them; the same run again is a no-op", async () => {
    const input = { dir, port: 9090, log_level: 'warn', features: ['search'] };
    const p = await api(k, 'POST', '/v1/incarnations/app/plans', { operation: 'create', input });
    assert.equal(p.status, 202, JSON.stringify(p.body));
    const plan = (await api(k, 'GET', `${p.body.plan}?wait=60s`)).body;
    assert.equal(plan.status, 'ready', JSON.stringify(plan));
    const [, port, level, json] = plan.hosts[0].steps;
    assert.deepEqual(
      [port.would_change, port.output, port.diff],
      [true, `would set PORT in ${dir}/app.env`, { key: 'PORT', from: '8080', to: '9090' }],
    );
    assert.deepEqual([level.would_change, level.diff], [true, { key: 'LOG_LEVEL', from: 'info', to: 'warn' }]);
    assert.deepEqual(
      [json.would_change, json.output, json.diff],
      [true, `would set port in ${dir}/settings.json`, { path: `${dir}/settings.json`, keys: ['port'] }],
    );
    assert.equal(envFile(), 'PORT=8080\nLOG_LEVEL=info\n', 'a plan changes nothing');

    const applied = await run(input);
    assert.deepEqual(steps(applied).slice(1), [
      ['env port', 'changed', `set PORT in ${dir}/app.env`],
      ['env log level', 'changed', `set LOG_LEVEL in ${dir}/app.env`],
      ['settings', 'changed', `set port in ${dir}/settings.json`],
    ]);
    // A changed line is written at the end of the file.
    assert.equal(envFile(), 'PORT=9090\nLOG_LEVEL=warn\n');
    assert.deepEqual(settings(), { port: 9090, features: ['search'] });
    const again = await run(input);
    assert.deepEqual(steps(again).slice(1), [
      ['env port', 'ok', `PORT is set in ${dir}/app.env`],
      ['env log level', 'ok', `LOG_LEVEL is set in ${dir}/app.env`],
      ['settings', 'ok', `${dir}/settings.json holds its settings`],
    ]);
  });

  it("a failing program's own words are its step's output", async () => {
    fs.writeFileSync(path.join(dir, 'settings.json'), 'port = 9090\n');
    const rep = await run({ dir, port: 9090, log_level: 'warn', features: ['search'] });
    const [name, status, output] = steps(rep)[3]!;
    assert.deepEqual([name, status], ['settings', 'failed']);
    assert.match(
      output,
      new RegExp(
        `^the module program exited with status 1: ${dir}/settings\\.json is not JSON \\(.*\\); nothing was changed$`,
        's',
      ),
    );
    assert.equal(fs.readFileSync(path.join(dir, 'settings.json'), 'utf8'), 'port = 9090\n');
    // Fixed on the host, the locked incarnation is unlocked and its run retried: the file is written.
    fs.writeFileSync(path.join(dir, 'settings.json'), '{}\n');
    assert.equal((await api(k, 'POST', '/v1/incarnations/app/unlock', { retry: true })).status, 202);
    assert.equal((await settled(k, 'app')).status, 'ready');
    assert.deepEqual(settings(), { port: 9090, features: ['search'] });
  });

  it('destroy removes the env lines (sh module, absent) and the settings file', async () => {
    fs.appendFileSync(path.join(dir, 'app.env'), 'OTHER=kept\n');
    const r = await api(k, 'DELETE', '/v1/incarnations/app');
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const done = await waitFor(
      'the destroy run to end',
      async () => {
        const x = await report(r.body.apply_id);
        return x.status === 'succeeded' || x.status === 'failed' ? x : undefined;
      },
      60_000,
      200,
    );
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    assert.deepEqual(steps(done), [
      ['env port', 'changed', `removed PORT from ${dir}/app.env`],
      ['env log level', 'changed', `removed LOG_LEVEL from ${dir}/app.env`],
      ['settings', 'changed', `removed file ${dir}/settings.json`],
    ]);
    assert.equal(envFile(), 'OTHER=kept\n');
    assert.equal(fs.existsSync(path.join(dir, 'settings.json')), false);
  });
});
