// The scenario language's run semantics end to end, with the real engine and real souls
// (test/fixtures/services/semantics, one task per rule): apply-time expressions see input defaults,
// every step of the plan is reported on every host with the reason it was skipped, a skipped step
// registers a skipped result, require: counts a step that did not run as succeeded, onchanges: work
// owed by a locked run runs in its retry, validate: refuses a bad candidate file, owner/group/mode
// and a package version reach the soul; the API refuses what it can know before starting; a
// never-onboarded soul is `pending` and does not lock the run; a failed run is a failed workflow.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { repoRoot } from '../support/repo';
import { connectStackTemporal } from '../support/temporal-client';
import type { TestKeeper } from '../support/keeper';
import { uniqueSid } from '../agents/harness';
import { api, gitRepoFrom, settled, startRunKeeper, startSouls, stopRunRig, tempDir, type TestSoul } from './keeper';

describe('run semantics with the real scenario engine (semantics example service, three souls)', function () {
  this.timeout(300_000);
  let k: TestKeeper;
  let root: string;
  let out: string;
  let souls: TestSoul[];
  let a: TestSoul;
  let b: TestSoul;
  let quiet: TestSoul;
  let unboarded: string;
  let base: Record<string, unknown>;
  const gitVersion = execFileSync('dpkg-query', ['-W', '-f=${Version}', 'git']).toString();

  before(async () => {
    root = tempDir('runs-semantics-');
    out = path.join(root, 'out');
    base = { root: out, git_version: gitVersion, uid: '1234' };
    const url = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'semantics'),
      path.join(root, 'semantics.git'),
      'v1',
    );
    k = await startRunKeeper();
    souls = await startSouls(k, path.join(root, 'souls'), [['web'], ['web', 'extra'], ['web', 'quiet']]);
    [a, b, quiet] = souls as [TestSoul, TestSoul, TestSoul];
    // Registered in the coven, never onboarded (no `soul init`).
    unboarded = uniqueSid('fresh');
    assert.equal(
      (await api(k, 'POST', '/v1/souls', { sid: unboarded, transport: 'agent', covens: ['web'] })).status,
      201,
    );
    const r = await api(k, 'POST', '/v1/services', { name: 'semantics', git: url, ref: 'v1' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  });
  after(() => stopRunRig({ souls, k, root }));

  const file = (sid: string, name: string) => path.join(out, sid, name);
  const report = async (applyId: string) => (await api(k, 'GET', `/v1/incarnations/sem/runs/${applyId}`)).body;
  const steps = (rep: any, sid: string) =>
    Object.fromEntries(rep.hosts.find((h: any) => h.sid === sid).steps.map((s: any) => [s.name, s]));

  it('refuses before starting: a missing required input, covens with no onboarded soul; nothing is created', async () => {
    const missing = await api(k, 'POST', '/v1/incarnations', {
      name: 'sem',
      service: 'semantics',
      covens: ['web'],
      input: { git_version: gitVersion },
    });
    assert.equal(missing.status, 400, JSON.stringify(missing.body));
    assert.deepEqual(
      missing.body.errors.map((e: any) => e.path),
      ['/body/input/root'],
    );
    assert.match(missing.body.errors[0].message, /input "root" is required and has no default/);
    const typo = await api(k, 'POST', '/v1/incarnations', {
      name: 'sem',
      service: 'semantics',
      covens: ['web'],
      input: { ...base, greting: 'x' },
    });
    assert.equal(typo.status, 400);
    assert.deepEqual(
      typo.body.errors.map((e: any) => e.path),
      ['/body/input/greting'],
    );
    const empty = await api(k, 'POST', '/v1/incarnations', {
      name: 'sem',
      service: 'semantics',
      covens: ['nobody'],
      input: base,
    });
    assert.equal(empty.status, 400);
    assert.deepEqual(
      empty.body.errors.map((e: any) => e.path),
      ['/body/covens'],
    );
    assert.match(empty.body.detail, /allow_empty/);
    assert.equal((await api(k, 'GET', '/v1/incarnations/sem')).status, 404, 'nothing was created');

    const asked = await api(k, 'POST', '/v1/incarnations', {
      name: 'sem-empty',
      service: 'semantics',
      covens: ['nobody'],
      input: base,
      allow_empty: true,
    });
    assert.equal(asked.status, 202, JSON.stringify(asked.body));
    assert.equal((await settled(k, 'sem-empty')).status, 'ready');
  });

  it('creates: every step on every host reported, with skip reasons; registered skipped results; require; defaults seen by failed_when; pending soul', async () => {
    const r = await api(k, 'POST', '/v1/incarnations', {
      name: 'sem',
      service: 'semantics',
      covens: ['web'],
      input: base,
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const inc = await settled(k, 'sem');
    const rep = await report(r.body.apply_id);
    assert.equal(inc.status, 'ready', JSON.stringify(rep.hosts, null, 1));
    assert.equal(rep.input.broken, undefined, "the run keeps the operator's own input");
    const hosts = Object.fromEntries(rep.hosts.map((h: any) => [h.sid, h]));
    assert.equal(hosts[unboarded].status, 'pending');
    assert.match(hosts[unboarded].reason, /not yet onboarded/);
    assert.equal(hosts[quiet.sid].status, 'skipped');
    assert.match(hosts[quiet.sid].reason, /where/);
    // serial: 1: one host per batch, in order.
    assert.deepEqual([hosts[a.sid].batch, hosts[b.sid].batch].sort(), [1, 2]);

    const sa = steps(rep, a.sid);
    const sb = steps(rep, b.sid);
    assert.deepEqual(Object.keys(sa), ['git', 'conf', 'extra', 'saw extra skipped', 'checked', 'reload']);
    assert.deepEqual(
      Object.values(sa).map((s: any) => s.status),
      ['ok', 'changed', 'skipped', 'changed', 'changed', 'changed'],
    );
    assert.equal(sa['extra'].skip_reason, 'on');
    assert.deepEqual(
      Object.values(sb).map((s: any) => s.status),
      ['ok', 'changed', 'changed', 'skipped', 'changed', 'changed'],
    );
    assert.equal(sb['saw extra skipped'].skip_reason, 'when');
    // `when: extra.skipped` with `require: [extra]` ran where extra was left out by `on:`.
    assert.equal(fs.readFileSync(file(a.sid, 'extra-was-skipped'), 'utf8'), 'yes\n');
    assert.ok(!fs.existsSync(file(b.sid, 'extra-was-skipped')));
    assert.ok(!fs.existsSync(path.join(out, quiet.sid)), 'the host left out by the scenario where: got nothing');
    const st = fs.statSync(file(a.sid, 'app.conf'));
    assert.deepEqual([st.uid, st.gid, st.mode & 0o7777], [1234, 1234, 0o640]);
    assert.equal(fs.readFileSync(file(a.sid, 'app.conf'), 'utf8'), 'greeting=hello\n', 'the default of greeting');

    const runs = (await api(k, 'GET', '/v1/incarnations/sem/runs?limit=1')).body;
    assert.deepEqual(
      runs.items.map((x: any) => [x.apply_id, x.status]),
      [[r.body.apply_id, 'succeeded']],
    );
    assert.equal(runs.next_cursor, null);
  });

  it('a run with no input runs with the last committed one; an unknown operation is a 400', async () => {
    const again = await api(k, 'POST', '/v1/incarnations/sem/runs', { operation: 'create' });
    assert.equal(again.status, 202, JSON.stringify(again.body));
    assert.equal((await settled(k, 'sem')).status, 'ready');
    const rep = await report(again.body.apply_id);
    assert.deepEqual(rep.input, base);
    assert.equal(rep.summary.changed, false);
    const unknown = await api(k, 'POST', '/v1/incarnations/sem/runs', { operation: 'destroy' });
    assert.equal(unknown.status, 400);
    assert.deepEqual(
      unknown.body.errors.map((e: any) => e.path),
      ['/body/operation'],
    );
    assert.match(unknown.body.detail, /use one of: create, reconfigure/);
    const up = await api(k, 'POST', '/v1/incarnations/sem/upgrade', { to_version: 5 });
    assert.equal(up.status, 400);
    assert.deepEqual(
      up.body.errors.map((e: any) => e.path),
      ['/body/to_version'],
    );
    const list = (await api(k, 'GET', '/v1/incarnations/sem/runs?limit=1')).body;
    assert.equal(list.items[0].apply_id, again.body.apply_id, 'newest first');
    const older = (await api(k, 'GET', `/v1/incarnations/sem/runs?limit=1&cursor=${list.next_cursor}`)).body;
    assert.equal(older.items.length, 1);
    assert.notEqual(older.items[0].apply_id, again.body.apply_id);
  });

  it('failed_when locks the run (a failed workflow in Temporal); its retry still runs the onchanges: work the locked run owed', async () => {
    const bad = await api(k, 'POST', '/v1/incarnations/sem/runs', {
      operation: 'create',
      input: { ...base, greeting: 'second', broken: true },
    });
    assert.equal(bad.status, 202);
    assert.equal((await settled(k, 'sem')).status, 'error_locked');
    const rep = await report(bad.body.apply_id);
    const first = rep.hosts.find((h: any) => h.status === 'failed');
    assert.ok(first, JSON.stringify(rep.hosts));
    const s = steps(rep, first.sid);
    assert.equal(s['conf'].status, 'failed');
    // The report names the expression and the values it read.
    assert.match(
      s['conf'].output,
      /failed_when: `input.broken && result.ok` is true \(input.broken = true, result.ok = true\)/,
    );
    assert.equal(s['reload'].skip_reason, 'earlier_failure');
    assert.equal(
      fs.readFileSync(file(first.sid, 'app.conf'), 'utf8'),
      'greeting=second\n',
      'the change happened before failed_when judged it',
    );

    const connection = await connectStackTemporal();
    try {
      const desc = await new Client({ connection, namespace: 'default' }).workflow
        .getHandle(bad.body.apply_id)
        .describe();
      assert.equal(desc.status.name, 'FAILED');
    } finally {
      await connection.close();
    }

    // The retry's input merges over the failed run's: `broken` is taken out with null (docs/runs.md).
    const retry = await api(k, 'POST', '/v1/incarnations/sem/unlock', {
      retry: true,
      input: { greeting: 'second', broken: null },
    });
    assert.equal(retry.status, 202, JSON.stringify(retry.body));
    assert.equal((await settled(k, 'sem')).status, 'ready');
    const after = steps(await report(retry.body.apply_id), first.sid);
    assert.equal(after['conf'].status, 'ok', 'nothing left to change');
    assert.equal(after['reload'].status, 'changed', 'owed by the locked run');
    assert.equal(fs.readFileSync(file(first.sid, 'reloaded'), 'utf8'), 'reloaded for second\n');
  });

  it('validate: refuses a bad candidate file and leaves the live file untouched', async () => {
    const r = await api(k, 'POST', '/v1/incarnations/sem/runs', {
      operation: 'create',
      input: { ...base, greeting: 'second', body: 'broken' },
    });
    assert.equal(r.status, 202);
    assert.equal((await settled(k, 'sem')).status, 'error_locked');
    const rep = await report(r.body.apply_id);
    const host = rep.hosts.find((h: any) => h.status === 'failed');
    assert.match(
      steps(rep, host.sid)['checked'].output,
      /validate: grep refused the new content \(exit 1\); the live file is unchanged/,
    );
    assert.equal(fs.readFileSync(file(host.sid, 'checked.conf'), 'utf8'), 'ok: fine\n');
    assert.deepEqual(
      fs.readdirSync(path.join(out, host.sid)).filter((f) => f.startsWith('.')),
      [],
      'no candidate left behind',
    );
  });
});
