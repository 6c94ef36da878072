// Incarnation runs end to end on the real stack: a keeper with its Temporal workers, three real
// souls (own hostnames, two covens) applying through their state modules and ledgers.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { TestKeeper } from '../support/keeper';
import { repoRoot } from '../support/repo';
import { recordHistories } from './histories';
import {
  api,
  commitVersion3,
  gitRepoFrom,
  settled,
  startRunKeeper,
  startSouls,
  stopRunRig,
  tempDir,
  type TestSoul,
} from './keeper';

const FIXTURES = path.join(repoRoot(), 'test', 'fixtures', 'services');

describe('incarnation runs: create, re-run, lock, unlock with retry, render error, upgrade', function () {
  this.timeout(300_000);
  let k: TestKeeper;
  let root: string;
  let souls: TestSoul[];
  let repo: string;
  let base: { root: string };
  const recorded: Record<string, string> = {};

  before(async () => {
    root = tempDir('runs-');
    base = { root };
    repo = path.join(root, 'lifecycle.git');
    const url = gitRepoFrom(path.join(FIXTURES, 'lifecycle'), repo, 'v1');
    k = await startRunKeeper();
    souls = await startSouls(k, path.join(root, 'souls'), [['web'], ['web'], ['db']]);
    const r = await api(k, 'POST', '/v1/services', { name: 'lifecycle', git: url, ref: 'v1' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  });
  after(async () => {
    await recordHistories(recorded);
    await stopRunRig({ souls, k, root });
  });

  const motd = (sid: string) => fs.readFileSync(path.join(root, sid, 'motd'), 'utf8');
  const report = async (applyId: string) => (await api(k, 'GET', `/v1/incarnations/motd-web/runs/${applyId}`)).body;

  it('creates an incarnation: 202 with apply_id, then ready with files on the web hosts only and state committed', async () => {
    const r = await api(k, 'POST', '/v1/incarnations', {
      name: 'motd-web',
      service: 'lifecycle',
      covens: ['web'],
      input: { ...base, greeting: 'hello' },
    });
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
    assert.deepEqual(
      rep.hosts.map((h: any) => h.sid),
      [web1.sid, web2.sid].sort(),
    );
    for (const h of rep.hosts) {
      assert.equal(h.status, 'changed');
      assert.deepEqual(
        h.steps.map((s: any) => s.status),
        ['ok', 'changed', 'changed'],
      );
      assert.ok(h.steps.every((s: any) => s.started_at && s.finished_at));
    }
    const hist = (await api(k, 'GET', '/v1/incarnations/motd-web/history')).body;
    assert.equal(hist.items.length, 1);
    assert.equal(hist.items[0].apply_id, r.body.apply_id);
  });

  it('a second identical run changes nothing and says so; history stays as it was', async () => {
    const r = await api(k, 'POST', '/v1/incarnations/motd-web/runs', {
      operation: 'create',
      input: { ...base, greeting: 'hello' },
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    recorded['rerun-no-change'] = r.body.apply_id;
    const inc = await settled(k, 'motd-web');
    assert.equal(inc.status, 'ready');
    const rep = await report(r.body.apply_id);
    assert.equal(rep.summary.changed, false);
    assert.equal(rep.summary.state_changed, false);
    for (const h of rep.hosts) {
      assert.equal(h.status, 'ok');
      assert.deepEqual(
        h.steps.map((s: any) => s.status),
        ['ok', 'ok', 'skipped'],
        'the `when:` step is skipped because motd did not change',
      );
    }
    assert.equal((await api(k, 'GET', '/v1/incarnations/motd-web/history')).body.items.length, 1);
  });

  it('a failing step locks the incarnation with state and history unchanged; runs are refused until unlock; unlock with retry and fixed input gets to ready', async () => {
    const bad = await api(k, 'POST', '/v1/incarnations/motd-web/runs', {
      operation: 'create',
      input: { ...base, greeting: 'bye', dir: '/proc/keeper-nope' },
    });
    assert.equal(bad.status, 202);
    recorded['step-failed-locked'] = bad.body.apply_id;
    const locked = await settled(k, 'motd-web');
    assert.equal(locked.status, 'error_locked');
    assert.deepEqual(locked.state, { greeting: 'hello' }, 'the previous consistent state stays');
    const rep = await report(bad.body.apply_id);
    assert.equal(rep.status, 'failed');
    for (const h of rep.hosts) {
      assert.equal(h.status, 'failed');
      assert.deepEqual(
        h.steps.map((s: any) => s.status),
        ['ok', 'failed', 'skipped'],
      );
    }
    assert.equal((await api(k, 'GET', '/v1/incarnations/motd-web/history')).body.items.length, 1);

    const refused = await api(k, 'POST', '/v1/incarnations/motd-web/runs', {
      operation: 'create',
      input: { ...base, greeting: 'x' },
    });
    assert.equal(refused.status, 409);
    assert.match(refused.body.detail, /error_locked.*unlock/);

    // A retry's input merges over the failed run's (docs/runs.md "Input: one key at a time"): the
    // bad `dir` is taken out with null, back to its default; the rest stays as the failed run had it.
    const retry = await api(k, 'POST', '/v1/incarnations/motd-web/unlock', {
      retry: true,
      input: { greeting: 'bye', dir: null },
    });
    assert.equal(retry.status, 202, JSON.stringify(retry.body));
    recorded['unlock-retry-ready'] = retry.body.apply_id;
    const ready = await settled(k, 'motd-web');
    assert.equal(ready.status, 'ready');
    assert.deepEqual(ready.state, { greeting: 'bye' });
    assert.equal(motd(souls[0]!.sid), `bye from ${souls[0]!.sid}\n`);
    const hist = (await api(k, 'GET', '/v1/incarnations/motd-web/history')).body;
    assert.deepEqual(
      hist.items.map((h: any) => h.state.greeting),
      ['hello', 'bye'],
    );
    assert.equal(hist.items[1].run.apply_id, retry.body.apply_id);
  });

  it('a render error fails the run before any soul is contacted', async () => {
    const r = await api(k, 'POST', '/v1/incarnations', {
      name: 'motd-broken',
      service: 'lifecycle',
      covens: ['web', 'db'],
      input: { ...base, greeting: 'x', break_render: true },
    });
    assert.equal(r.status, 202);
    recorded['render-error'] = r.body.apply_id;
    const inc = await settled(k, 'motd-broken');
    assert.equal(inc.status, 'error_locked');
    const rep = (await api(k, 'GET', `/v1/incarnations/motd-broken/runs/${r.body.apply_id}`)).body;
    assert.equal(rep.status, 'failed');
    // Which keeper rendered: keepers of a cluster may differ in what they can load (issue 33).
    assert.match(rep.error, new RegExp(`render failed .*\\(rendered on keeper ${k.config.kid}\\)`), rep.error);
    assert.equal(rep.hosts.length, 0, 'no host was dispatched to');
    assert.ok(rep.render_errors.length >= 1, JSON.stringify(rep));
    for (const e of rep.render_errors) {
      // The error points at the motd task's path (file:line) and names the fact no host has.
      assert.equal(e.file, 'scenario/create/main.yml');
      assert.equal(e.line, 23, JSON.stringify(e));
      assert.match(e.message, /no_such_fact/);
    }
    for (const s of souls) {
      const ledger = path.join(s.dir, 'seed', 'ledger');
      const files = fs.existsSync(ledger) ? fs.readdirSync(ledger) : [];
      assert.ok(!files.some((f) => f.startsWith(r.body.apply_id)), `${s.sid} was never sent a step of the failed run`);
    }
  });

  it('upgrade migrates the state through two migrations in one commit, forward only', async () => {
    commitVersion3(repo); // a commit with migrations/2.yml and 3.yml, published as v3
    const published = await api(k, 'POST', '/v1/services/lifecycle/versions', { ref: 'v3' });
    assert.equal(published.status, 201, JSON.stringify(published.body));
    const r = await api(k, 'POST', '/v1/incarnations/motd-web/upgrade', { version: 'v3' });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    recorded['upgrade'] = r.body.apply_id;
    const inc = await settled(k, 'motd-web');
    assert.equal(inc.status, 'ready');
    assert.equal(inc.state_schema_version, 3);
    assert.deepEqual(inc.state, { greeting: 'bye', motd: { greeting: 'bye' }, schema: 'v3' });
    const hist = (await api(k, 'GET', '/v1/incarnations/motd-web/history')).body;
    assert.equal(hist.items.length, 3);
    assert.equal(hist.items[2].operation, 'upgrade');
    const back = await api(k, 'POST', '/v1/incarnations/motd-web/upgrade', { version: 'v1' });
    assert.equal(back.status, 409, JSON.stringify(back.body));
    assert.match(back.body.detail, /3.*1|1.*3/, 'the refusal names both schema versions');
  });

  it('lists incarnations filtered by status and service', async () => {
    const locked = (await api(k, 'GET', '/v1/incarnations?status=error_locked')).body;
    assert.deepEqual(
      locked.items.map((i: any) => i.name),
      ['motd-broken'],
    );
    const all = (await api(k, 'GET', '/v1/incarnations?service=lifecycle&limit=1')).body;
    assert.equal(all.items.length, 1);
    assert.ok(all.next_cursor);
  });

  it('a soul killed mid-run: error_locked, that host unknown, nothing committed', async () => {
    const victim = souls[2]!;
    const r = await api(k, 'POST', '/v1/incarnations', {
      name: 'motd-all',
      service: 'lifecycle',
      covens: ['web', 'db'],
      input: { ...base, greeting: 'hi', stall: victim.sid },
    });
    assert.equal(r.status, 202);
    // Killed while its greeting step is being retried: the file of the first attempt is there, and a
    // retry (1 s apart) is under way. Waiting on the file, not a fixed time, holds on a loaded machine.
    const written = path.join(root, victim.sid, 'motd');
    for (let t = 0; t < 300 && !fs.existsSync(written); t++) await new Promise((res) => setTimeout(res, 100));
    assert.ok(fs.existsSync(written), 'the stalled host applied its greeting step once');
    await new Promise((res) => setTimeout(res, 1500));
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
