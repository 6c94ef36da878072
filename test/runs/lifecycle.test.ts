// Incarnation runs end to end on the real stack: a keeper with its Temporal workers, three real
// souls (own hostnames, two covens) applying through their state modules and ledgers.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { TestKeeper } from '../support/keeper';
import { fixtureScenario, type FixtureService } from './fixture-scenario';
import { recordHistories } from './histories';
import { api, settled, startRunKeeper, startSouls, tempDir, type TestSoul } from './keeper';

const GIT = 'file:///fixtures/motd.git';

function motdService(root: string): FixtureService {
  return {
    name: 'motd', stateSchemaVersion: 1,
    operations: {
      create: ({ input, sid }) => {
        if (typeof input.greeting !== 'string') {
          return { errors: [{ file: 'scenario/create/main.yml', line: 7, col: 18, rule: 'undeclared-reference', message: 'input.greeting is not set and has no default' }] };
        }
        const dir = typeof input.dir === 'string' ? input.dir : path.join(root, sid);
        return {
          steps: [
            { name: 'git is installed', module: 'core.pkg.installed', params: { name: 'git' } },
            {
              name: 'motd', module: 'core.file.present', params: { path: path.join(dir, 'motd'), content: `${input.greeting} from ${sid}\n`, mode: '0644' }, register: 'motd',
              // A host that never converges keeps its step busy: the test kills that soul meanwhile.
              ...(input.stall === sid ? { until: 'false', retries: 20, delay_ms: 300 } : {}),
            },
            { name: 'stamp only when motd changed', module: 'core.file.present', params: { path: path.join(root, sid, 'stamp'), content: 'x\n', mode: '0600' }, when: 'motd.changed' },
          ],
          stateSets: { greeting: input.greeting },
        };
      },
    },
    migrations: {
      2: (s) => ({ ...s, motd: { greeting: s.greeting } }),
      3: (s) => { const { greeting: _g, ...rest } = s; return { ...rest, schema: 'v3' }; },
    },
  };
}

describe('incarnation runs: create, re-run, lock, unlock with retry, render error, upgrade', function () {
  this.timeout(300_000);
  let k: TestKeeper;
  let root: string;
  let souls: TestSoul[];
  let service: FixtureService;
  const scenario = fixtureScenario({});
  const recorded: Record<string, string> = {};

  before(async () => {
    root = tempDir('runs-');
    service = motdService(root);
    Object.assign(scenario, fixtureScenario({ [GIT]: service }));
    k = await startRunKeeper(scenario);
    souls = await startSouls(k, path.join(root, 'souls'), [['web'], ['web'], ['db']]);
    const r = await api(k, 'POST', '/v1/services', { name: 'motd', git: GIT, ref: 'v1' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  });
  after(async () => {
    await recordHistories(recorded);
    await Promise.all((souls ?? []).map((s) => s.run.kill()));
    await k?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const motd = (sid: string) => fs.readFileSync(path.join(root, sid, 'motd'), 'utf8');
  const report = async (applyId: string) => (await api(k, 'GET', `/v1/incarnations/motd-web/runs/${applyId}`)).body;

  it('creates an incarnation: 202 with apply_id, then ready with files on the web hosts only and state committed', async () => {
    const r = await api(k, 'POST', '/v1/incarnations', { name: 'motd-web', service: 'motd', covens: ['web'], input: { greeting: 'hello' } });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.ok(r.body.apply_id.startsWith('motd-web.create.'));
    recorded['create-ready'] = r.body.apply_id;
    assert.match(r.body.temporal_ui, new RegExp(`/namespaces/default/workflows/${r.body.apply_id}$`));
    const inc = await settled(k, 'motd-web');
    assert.equal(inc.status, 'ready', JSON.stringify(inc.last_run));
    assert.deepEqual(inc.state, { greeting: 'hello' });
    assert.equal(inc.state_schema_version, 1);
    const [web1, web2, db1] = souls as [TestSoul, TestSoul, TestSoul];
    assert.equal(motd(web1.sid), `hello from ${web1.sid}\n`);
    assert.equal(motd(web2.sid), `hello from ${web2.sid}\n`);
    assert.ok(!fs.existsSync(path.join(root, db1.sid, 'motd')), 'the db host does not carry the web coven');
    const rep = await report(r.body.apply_id);
    assert.equal(rep.status, 'succeeded');
    assert.deepEqual(rep.hosts.map((h: any) => h.sid), [web1.sid, web2.sid].sort());
    for (const h of rep.hosts) {
      assert.equal(h.status, 'changed');
      assert.deepEqual(h.steps.map((s: any) => s.status), ['ok', 'changed', 'changed']);
      assert.ok(h.steps.every((s: any) => s.started_at && s.finished_at));
    }
    const hist = (await api(k, 'GET', '/v1/incarnations/motd-web/history')).body;
    assert.equal(hist.items.length, 1);
    assert.equal(hist.items[0].apply_id, r.body.apply_id);
  });

  it('a second identical run changes nothing and says so; history stays as it was', async () => {
    const r = await api(k, 'POST', '/v1/incarnations/motd-web/runs', { operation: 'create', input: { greeting: 'hello' } });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    recorded['rerun-no-change'] = r.body.apply_id;
    const inc = await settled(k, 'motd-web');
    assert.equal(inc.status, 'ready');
    const rep = await report(r.body.apply_id);
    assert.equal(rep.summary.changed, false);
    assert.equal(rep.summary.state_changed, false);
    for (const h of rep.hosts) {
      assert.equal(h.status, 'ok');
      assert.deepEqual(h.steps.map((s: any) => s.status), ['ok', 'ok', 'skipped'], 'the `when:` step is skipped because motd did not change');
    }
    assert.equal((await api(k, 'GET', '/v1/incarnations/motd-web/history')).body.items.length, 1);
  });

  it('a failing step locks the incarnation with state and history unchanged; runs are refused until unlock; unlock with retry and fixed input gets to ready', async () => {
    const bad = await api(k, 'POST', '/v1/incarnations/motd-web/runs', { operation: 'create', input: { greeting: 'bye', dir: '/proc/keeper-nope' } });
    assert.equal(bad.status, 202);
    recorded['step-failed-locked'] = bad.body.apply_id;
    const locked = await settled(k, 'motd-web');
    assert.equal(locked.status, 'error_locked');
    assert.deepEqual(locked.state, { greeting: 'hello' }, 'the previous consistent state stays');
    const rep = await report(bad.body.apply_id);
    assert.equal(rep.status, 'failed');
    for (const h of rep.hosts) {
      assert.equal(h.status, 'failed');
      assert.deepEqual(h.steps.map((s: any) => s.status), ['ok', 'failed', 'skipped']);
    }
    assert.equal((await api(k, 'GET', '/v1/incarnations/motd-web/history')).body.items.length, 1);

    const refused = await api(k, 'POST', '/v1/incarnations/motd-web/runs', { operation: 'create', input: { greeting: 'x' } });
    assert.equal(refused.status, 409);
    assert.match(refused.body.detail, /error_locked.*unlock/);

    const retry = await api(k, 'POST', '/v1/incarnations/motd-web/unlock', { retry: true, input: { greeting: 'bye' } });
    assert.equal(retry.status, 202, JSON.stringify(retry.body));
    recorded['unlock-retry-ready'] = retry.body.apply_id;
    const ready = await settled(k, 'motd-web');
    assert.equal(ready.status, 'ready');
    assert.deepEqual(ready.state, { greeting: 'bye' });
    assert.equal(motd(souls[0]!.sid), `bye from ${souls[0]!.sid}\n`);
    const hist = (await api(k, 'GET', '/v1/incarnations/motd-web/history')).body;
    assert.deepEqual(hist.items.map((h: any) => h.state.greeting), ['hello', 'bye']);
    assert.equal(hist.items[1].run.apply_id, retry.body.apply_id);
  });

  it('a render error fails the run before any soul is contacted', async () => {
    const r = await api(k, 'POST', '/v1/incarnations', { name: 'motd-broken', service: 'motd', covens: ['web', 'db'], input: {} });
    assert.equal(r.status, 202);
    recorded['render-error'] = r.body.apply_id;
    const inc = await settled(k, 'motd-broken');
    assert.equal(inc.status, 'error_locked');
    const rep = (await api(k, 'GET', `/v1/incarnations/motd-broken/runs/${r.body.apply_id}`)).body;
    assert.equal(rep.status, 'failed');
    assert.equal(rep.hosts.length, 0, 'no host was dispatched to');
    assert.deepEqual(rep.render_errors, [{ file: 'scenario/create/main.yml', line: 7, col: 18, rule: 'undeclared-reference', message: 'input.greeting is not set and has no default' }]);
    for (const s of souls) {
      const ledger = path.join(s.dir, 'seed', 'ledger');
      const files = fs.existsSync(ledger) ? fs.readdirSync(ledger) : [];
      assert.ok(!files.some((f) => f.startsWith(r.body.apply_id)), `${s.sid} was never sent a step of the failed run`);
    }
  });

  it('upgrade migrates the state through two migrations in one commit, forward only', async () => {
    service.stateSchemaVersion = 3; // the catalog ref now points at a commit with migrations/2.yml and 3.yml
    const r = await api(k, 'POST', '/v1/incarnations/motd-web/upgrade', {});
    assert.equal(r.status, 202, JSON.stringify(r.body));
    recorded['upgrade'] = r.body.apply_id;
    const inc = await settled(k, 'motd-web');
    assert.equal(inc.status, 'ready');
    assert.equal(inc.state_schema_version, 3);
    assert.deepEqual(inc.state, { motd: { greeting: 'bye' }, schema: 'v3' });
    const hist = (await api(k, 'GET', '/v1/incarnations/motd-web/history')).body;
    assert.equal(hist.items.length, 3);
    assert.equal(hist.items[2].operation, 'upgrade');
    const back = await api(k, 'POST', '/v1/incarnations/motd-web/upgrade', { to_version: 2 });
    assert.equal(back.status, 400);
  });

  it('lists incarnations filtered by status and service', async () => {
    const locked = (await api(k, 'GET', '/v1/incarnations?status=error_locked')).body;
    assert.deepEqual(locked.items.map((i: any) => i.name), ['motd-broken']);
    const all = (await api(k, 'GET', '/v1/incarnations?service=motd&limit=1')).body;
    assert.equal(all.items.length, 1);
    assert.ok(all.next_cursor);
  });

  it('a soul killed mid-run: error_locked, that host unknown, nothing committed', async () => {
    const victim = souls[2]!;
    const r = await api(k, 'POST', '/v1/incarnations', { name: 'motd-all', service: 'motd', covens: ['web', 'db'], input: { greeting: 'hi', stall: victim.sid } });
    assert.equal(r.status, 202);
    await new Promise((res) => setTimeout(res, 2000));
    await victim.run.kill('SIGKILL');
    const inc = await settled(k, 'motd-all');
    assert.equal(inc.status, 'error_locked');
    assert.deepEqual(inc.state, {});
    const rep = (await api(k, 'GET', `/v1/incarnations/motd-all/runs/${r.body.apply_id}`)).body;
    const bySid = Object.fromEntries(rep.hosts.map((h: any) => [h.sid, h]));
    assert.ok(bySid[victim.sid], JSON.stringify(rep));
    assert.equal(bySid[victim.sid].status, 'unknown');
    assert.equal(bySid[victim.sid].steps[1].status, 'unknown');
    assert.ok(bySid[victim.sid].steps[1].attempts >= 2, 'the step was still being retried when the soul died');
    assert.equal((await api(k, 'GET', '/v1/incarnations/motd-all/history')).body.items.length, 0);
  });
});
