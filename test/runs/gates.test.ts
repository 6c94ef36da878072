// Gates between batches (issue 30), on the real stack with real souls: four hosts, two per batch.
// `create` waits after batch 1 for its health check (the registered result of the step) and then for
// an operator's approval; the wait is in Temporal, so a keeper process killed with SIGKILL while the
// run waits, and started again, loses nothing: approved on the new process, the run finishes
// `ready`, approved at once, its second batch's souls still reconnecting. A viewer cannot approve (403), a run not waiting cannot be approved (409). The run's event stream, opened while it waits,
// says what it waits for and then that the wait ended; the approval is keeperctl's (exit 0, and exit
// 5, a conflict, with the keeper's reason and a hint once the run has ended). `update` has a health check that never holds:
// at its timeout the run locks naming the expression, the second batch never starts, nothing is
// committed. A run waiting for approval is cancelled with keeperctl (a viewer's cancel is a 403): no
// further batch, nothing committed, `error_locked` naming the operator, in the activity stream.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../support/repo';
import { clientFor, operatorToken } from '../api/helpers';
import {
  api,
  gitRepoFrom,
  initRunKeeper,
  settled,
  spawnKeeper,
  startSouls,
  stopRunRig,
  tempDir,
  waitFor,
  type KeeperProcess,
  type TestSoul,
} from './keeper';
import { createGatedAndAwaitApproval } from './gated';
import { readRunEvents } from './sse-reader';

describe('runs: gates between serial batches wait for a health check and an approval', function () {
  this.timeout(300_000);
  let k: Awaited<ReturnType<typeof initRunKeeper>>;
  // `bin/keeper run` in its own process, so that it can really be killed.
  let keeper: KeeperProcess | undefined;
  let root: string;
  let souls: TestSoul[] = [];
  const note = (s: TestSoul) => {
    const f = path.join(root, s.sid, 'motd');
    return fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : null;
  };
  /** keeperctl, the real program in its own process, as the operator holding `token`. */
  const ctl = (token: string, args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [path.join(repoRoot(), 'bin', 'keeperctl'), ...args], {
        env: { PATH: process.env['PATH'], HOME: root, KEEPER_URL: k.baseUrl, KEEPER_TOKEN: token },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    });
  const run = async (id: string) => (await api(k, 'GET', `/v1/incarnations/gated/runs/${id}`)).body;

  before(async () => {
    root = tempDir('gates-');
    const url = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'gated'),
      path.join(root, 'gated.git'),
      'v1',
    );
    k = await initRunKeeper();
    keeper = await spawnKeeper(k);
    const started: TestSoul[] = [];
    for (let i = 0; i < 2; i++)
      started.push(...(await startSouls(k, path.join(root, `souls${i}`), [['edge'], ['edge']])));
    // Render order is sid order: batch 1 is souls[0..1], batch 2 souls[2..3].
    souls = started.sort((a, b) => a.sid.localeCompare(b.sid));
    assert.equal((await api(k, 'POST', '/v1/services', { name: 'gated', git: url, ref: 'v1' })).status, 201);
  });
  after(() => stopRunRig({ souls, k, keeper, root }));

  it('waits for approval after batch 1 across a keeper SIGKILL; a viewer gets 403; approved, it finishes ready', async () => {
    const waiting = await createGatedAndAwaitApproval(k, root);
    const id = waiting.apply_id as string;
    assert.equal(waiting.status, 'running');
    assert.equal(waiting.waiting.batch, 1);
    assert.ok(Date.parse(waiting.waiting.since) <= Date.now());
    // Batch 1 applied (its health check held); batch 2 not started.
    assert.deepEqual(souls.map(note), ['v1\n', 'v1\n', null, null]);

    const vic = await operatorToken(k, 'vic', 'viewer');
    const denied = await clientFor(k, vic)('POST', `/v1/incarnations/gated/runs/${id}/approve`);
    assert.equal(denied.status, 403, JSON.stringify(denied.body));
    assert.match(JSON.stringify(denied.body), /runs:approve/);

    // The keeper process (API, workers, hub) is killed, no shutdown at all, and started again: the
    // wait is in Temporal, and the new process's workers take the run's history on.
    keeper!.child.kill('SIGKILL');
    assert.equal(await keeper!.exited, null, 'killed by the signal');
    keeper = await spawnKeeper(k);
    // Approved at once, while the souls are still reconnecting to the new process (their backoff):
    // batch 2's first routing waits for souls seen connected moments ago (docs/runs.md "The first
    // routing after a keeper restart"), so none of its hosts is `unknown` and the run ends ready.
    const still = await run(id);
    assert.equal(still.status, 'running');
    assert.equal(still.waiting?.for, 'approval', 'still waiting after the restart');
    assert.deepEqual(souls.map(note), ['v1\n', 'v1\n', null, null], 'nothing dispatched while waiting');

    // Its event stream, opened while it waits, says so first, then that the wait ended, then batch 2.
    const streamed = readRunEvents(`${k.baseUrl}/v1/incarnations/gated/runs/${id}/events`, k.adminToken);
    const ev = await readRunEvents(
      `${k.baseUrl}/v1/incarnations/gated/runs/${id}/events`,
      k.adminToken,
      (e) => e.event === 'waiting',
    );
    assert.deepEqual(ev[ev.length - 1]!.data, { waiting: still.waiting });

    const ops = await operatorToken(k, 'ops', 'operator');
    const ok = await ctl(ops, ['incarnations', 'approve', 'gated', id]);
    assert.equal(ok.code, 0, `${ok.stdout}${ok.stderr}`);
    assert.match(ok.stdout, new RegExp(`^approved ${id} after batch 1 \\(it waited \\d+s\\); batch 2 starts`));

    const inc = await settled(k, 'gated', 120_000);
    const hosts = (await run(id)).hosts.map((h: any) => `${h.sid} ${h.status} ${h.reason}`);
    assert.equal(inc.status, 'ready', `${JSON.stringify(inc.last_run)}\n${hosts.join('\n')}`);
    const events = await streamed;
    const names = events.map((e) => e.event);
    const waits = events.filter((e) => e.event === 'waiting').map((e) => e.data.waiting);
    assert.deepEqual(waits, [still.waiting, null], names.join(','));
    const ended = names.lastIndexOf('waiting');
    const batch2 = events.findIndex((e) => e.event === 'host' && e.data.batch === 2);
    assert.ok(batch2 > ended, `batch 2 after the wait ended: ${names.join(',')}`);
    assert.equal(names[names.length - 1], 'end');
    assert.deepEqual(souls.map(note), ['v1\n', 'v1\n', 'v1\n', 'v1\n']);
    const done = await run(id);
    assert.equal(done.status, 'succeeded');
    assert.equal(done.waiting, null);

    const again = await clientFor(k, ops)('POST', `/v1/incarnations/gated/runs/${id}/approve`);
    assert.equal(again.status, 409, JSON.stringify(again.body));
    assert.match(JSON.stringify(again.body), /not waiting for approval: it has ended \(succeeded\)/);
    const late = await ctl(ops, ['incarnations', 'approve', 'gated', id]);
    assert.equal(late.code, 5, `exit 5, a conflict: ${late.stdout}${late.stderr}`);
    assert.match(late.stderr, /not waiting for approval: it has ended \(succeeded\)/);
    assert.match(late.stderr, /fix: .*keeperctl incarnations get/);

    const activity = await api(k, 'GET', '/v1/activity?actor=ops');
    assert.ok(
      JSON.stringify(activity.body).includes('/approve'),
      `the approval is in the activity stream: ${JSON.stringify(activity.body).slice(0, 400)}`,
    );
  });

  it('a health check still false at its timeout locks the run; the next batch never starts, nothing is committed', async () => {
    const r = await api(k, 'POST', '/v1/incarnations/gated/runs', {
      operation: 'update',
      input: { root, greeting: 'v2' },
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const inc = await settled(k, 'gated', 120_000);
    assert.equal(inc.status, 'error_locked');
    assert.deepEqual(inc.state.greeting, 'v1', 'nothing committed');
    const report = await run(r.body.apply_id);
    assert.equal(report.status, 'failed');
    assert.match(
      report.error,
      /the health check `has\(soulprint\.self\.never_reported\)` after batch 1 was still false on host \S+ after 1s; the next batch was not started and nothing was committed/,
    );
    assert.deepEqual(souls.map(note), ['v2\n', 'v2\n', 'v1\n', 'v1\n'], 'batch 2 untouched');
    const skipped = report.hosts.filter((h: any) => h.status === 'skipped').map((h: any) => h.sid);
    // The report lists hosts in natural order, the batches follow sid order: compare as sets.
    assert.deepEqual([...skipped].sort(), [souls[2]!.sid, souls[3]!.sid].sort());
  });

  it('a run waiting for approval is cancelled: no further batch, nothing committed, error_locked naming the operator', async () => {
    assert.equal((await api(k, 'POST', '/v1/incarnations/gated/unlock')).status, 200);
    const r = await api(k, 'POST', '/v1/incarnations/gated/runs', {
      operation: 'create',
      input: { root, greeting: 'v3' },
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const id = r.body.apply_id as string;
    const waiting = await waitFor(
      'the run to wait for approval',
      async () => ((await run(id)).waiting?.for === 'approval' ? await run(id) : undefined),
      120_000,
    );
    assert.equal(waiting.waiting.batch, 1);
    assert.deepEqual(souls.map(note), ['v3\n', 'v3\n', 'v1\n', 'v1\n'], 'batch 1 applied, batch 2 not started');

    const vic = await operatorToken(k, 'vic2', 'viewer');
    const denied = await clientFor(k, vic)('POST', `/v1/incarnations/gated/runs/${id}/cancel`);
    assert.equal(denied.status, 403, JSON.stringify(denied.body));
    assert.match(JSON.stringify(denied.body), /runs:approve/);
    assert.equal((await run(id)).waiting?.for, 'approval', 'still waiting after the refused cancel');

    const ops = await operatorToken(k, 'ops2', 'operator');
    const out = await ctl(ops, ['incarnations', 'cancel', 'gated', id]);
    assert.equal(out.code, 0, `${out.stdout}${out.stderr}`);
    assert.match(
      out.stdout,
      new RegExp(`^cancelled ${id} while it waited for approval after batch 1; no further batch starts`),
    );

    const inc = await settled(k, 'gated', 120_000);
    assert.equal(inc.status, 'error_locked');
    assert.equal(inc.state.greeting, 'v1', 'nothing committed');
    const report = await run(id);
    assert.equal(report.status, 'failed');
    assert.equal(report.waiting, null);
    assert.equal(
      report.error,
      'cancelled by ops2 while waiting for approval after batch 1; the next batch was not started and nothing was committed',
    );
    const byStatus = (st: string) =>
      report.hosts
        .filter((h: any) => h.status === st)
        .map((h: any) => h.sid)
        .sort();
    assert.deepEqual(byStatus('skipped'), [souls[2]!.sid, souls[3]!.sid].sort());
    assert.deepEqual(
      report.hosts
        .filter((h: any) => h.batch === 1)
        .map((h: any) => h.status)
        .sort(),
      ['changed', 'changed'],
      'what batch 1 did stays recorded',
    );
    assert.deepEqual(souls.map(note), ['v3\n', 'v3\n', 'v1\n', 'v1\n'], 'batch 2 never dispatched');

    const again = await ctl(ops, ['incarnations', 'cancel', 'gated', id]);
    assert.equal(again.code, 5, `exit 5, a conflict: ${again.stdout}${again.stderr}`);
    assert.match(again.stderr, /cannot be cancelled: it has ended \(failed\)/);

    const activity = (await api(k, 'GET', '/v1/activity?actor=ops2')).body.items as any[];
    const cancels = activity.filter((a) => a.target === `/v1/incarnations/gated/runs/${id}/cancel`);
    assert.deepEqual(
      cancels.map((a) => a.status).sort(),
      [202, 409],
      `the cancel and the refused one in the activity stream: ${JSON.stringify(activity).slice(0, 400)}`,
    );
  });
});
