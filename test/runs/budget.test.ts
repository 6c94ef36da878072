// The failure budget and new hosts in one run (issue 30), on the real stack with real souls: ten
// hosts in batches of three, `max_failed: 2`. Two souls stopped: the run goes on through every
// batch, commits, and leaves the two pending for the incarnation; started again, they converge in
// one run without an operator. An operator's budget of 1 with two stopped: the rollout stops after
// the batch that went over, the incarnation locks and nothing is committed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { TestKeeper } from '../support/keeper';
import { repoRoot } from '../support/repo';
import { runKeeperctl } from '../support/keeperctl-process';
import { soulRun, waitForStatus } from '../agents/harness';
import { api, gitRepoFrom, settled, startRunKeeper, startSouls, tempDir, waitFor, type TestSoul } from './keeper';

describe('runs: a failure budget lets a fleet rollout finish around stopped hosts', function () {
  this.timeout(300_000);
  let k: TestKeeper;
  let root: string;
  let souls: TestSoul[] = [];
  const motd = (s: TestSoul) => path.join(root, s.sid, 'motd');
  const read = (s: TestSoul) => (fs.existsSync(motd(s)) ? fs.readFileSync(motd(s), 'utf8') : null);

  before(async () => {
    root = tempDir('budget-');
    const url = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'budget'),
      path.join(root, 'budget.git'),
      'v1',
    );
    k = await startRunKeeper();
    // Two at a time: ten `soul init` at once outrun two shared cores' TLS handshakes.
    const started: TestSoul[] = [];
    for (let i = 0; i < 5; i++)
      started.push(...(await startSouls(k, path.join(root, `souls${i}`), [['fleet'], ['fleet']])));
    // Render order is sid order: batches are souls[0..2], [3..5], [6..8], [9].
    souls = started.sort((a, b) => a.sid.localeCompare(b.sid));
    assert.equal((await api(k, 'POST', '/v1/services', { name: 'budget', git: url, ref: 'v1' })).status, 201);
  });
  after(async () => {
    await Promise.all(souls.map((s) => s.run.kill()));
    await k?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const stop = async (s: TestSoul) => {
    await s.run.kill();
    await waitForStatus(k, s.sid, 'disconnected', 20_000);
  };
  const start = (s: TestSoul) => {
    s.run = soulRun(s.sid, s.config);
  };
  /** keeperctl against the test keeper, as an operator runs it. */
  const ctl = (args: string[]) =>
    runKeeperctl(args, { PATH: process.env['PATH'], HOME: root, KEEPER_URL: k.baseUrl, KEEPER_TOKEN: k.adminToken });
  const runsOf = async (name: string) => (await api(k, 'GET', `/v1/incarnations/${name}/runs`)).body.items as any[];

  it('budget 2, two hosts stopped: the run is ready, 8 applied, the 2 pending; started again they converge in one run', async () => {
    const down = [souls[1]!, souls[4]!];
    await Promise.all(down.map(stop));
    const r = await api(k, 'POST', '/v1/incarnations', {
      name: 'fleet',
      service: 'budget',
      covens: ['fleet'],
      input: { root, greeting: 'v1' },
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const inc = await settled(k, 'fleet', 120_000);
    assert.equal(inc.status, 'ready', JSON.stringify(inc.last_run));
    assert.deepEqual(inc.state.greeting, 'v1', 'the state is committed');

    const report = (await api(k, 'GET', `/v1/incarnations/fleet/runs/${r.body.apply_id}`)).body;
    assert.equal(report.status, 'succeeded');
    const by = (st: string) =>
      report.hosts
        .filter((h: any) => h.status === st)
        .map((h: any) => h.sid)
        .sort();
    assert.equal(by('changed').length, 8, JSON.stringify(report.hosts));
    assert.deepEqual(by('unknown'), down.map((s) => s.sid).sort());
    assert.deepEqual(
      report.hosts.map((h: any) => h.batch).filter((b: number) => b === 4).length,
      1,
      'the last batch ran',
    );
    for (const s of souls) assert.equal(read(s), down.includes(s) ? null : 'v1\n');
    assert.deepEqual(
      inc.pending_hosts.map((p: any) => [p.sid, p.status, p.apply_id]),
      down.map((s) => [s.sid, 'unknown', r.body.apply_id]).sort(),
    );

    const shown = await ctl(['incarnations', 'get', 'fleet']);
    assert.equal(shown.code, 0, shown.stderr);
    for (const s of down)
      assert.match(
        shown.stdout,
        new RegExp(`pending_hosts:.*${s.sid} unknown in ${r.body.apply_id.replace(/\./g, '\\.')}`),
      );

    const metrics = await (await fetch(`${k.metricsUrl}/metrics`)).text();
    assert.match(metrics, /keeper_incarnation_pending_hosts\{incarnation="fleet"[^}]*\} 2\n/);

    // Back: the converger brings both in one run, with the committed operation and input.
    await Promise.all(
      down.map(async (s) => {
        start(s);
        await waitForStatus(k, s.sid, 'connected', 20_000);
      }),
    );
    const converge = await waitFor(
      'one converge run for the two returned hosts',
      async () => (await runsOf('fleet')).find((x) => Array.isArray(x.target_sids) && x.target_sids.length > 0),
      30_000,
      200,
    );
    assert.deepEqual([...converge.target_sids].sort(), down.map((s) => s.sid).sort(), 'both hosts in one run');
    const after = await settled(k, 'fleet', 120_000);
    assert.equal(after.status, 'ready');
    assert.deepEqual(after.pending_hosts, []);
    for (const s of souls) assert.equal(read(s), 'v1\n');
    assert.equal((await runsOf('fleet')).length, 2, 'one run for the fleet, one for the returned hosts');
  });

  it("an operator budget over the scenario's is refused naming the field; nothing starts", async () => {
    const over = await api(k, 'POST', '/v1/incarnations/fleet/runs', {
      operation: 'create',
      input: { root, greeting: 'v2' },
      max_failed: 3,
    });
    assert.equal(over.status, 400, JSON.stringify(over.body));
    assert.equal(over.body.errors[0].path, '/body/max_failed');
    assert.match(over.body.errors[0].message, /at most the scenario's max_failed \(2\)/);
    const bad = await api(k, 'POST', '/v1/incarnations/fleet/runs', {
      operation: 'create',
      input: { root, greeting: 'v2' },
      max_failed: 'half',
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errors[0].path, '/body/max_failed');
    const cli = await ctl([
      'run',
      'fleet',
      'create',
      '--input',
      `root=${root}`,
      '--input',
      'greeting=v2',
      '--max-failed',
      '5',
      '--yes',
      '--no-follow',
    ]);
    assert.equal(cli.code, 2, cli.stdout + cli.stderr);
    assert.match(cli.stderr, /max_failed/);
    assert.equal((await runsOf('fleet')).length, 2);
    assert.equal((await api(k, 'GET', '/v1/incarnations/fleet')).body.status, 'ready');
  });

  it('budget 1, two hosts stopped: stops after the batch over budget, locks, commits nothing', async () => {
    const down = [souls[1]!, souls[4]!];
    await Promise.all(down.map(stop));
    const cli = await ctl([
      'run',
      'fleet',
      'create',
      '--input',
      `root=${root}`,
      '--input',
      'greeting=v2',
      '--max-failed',
      '1',
      '--yes',
      '--no-follow',
      '-o',
      'json',
    ]);
    assert.equal(cli.code, 0, cli.stdout + cli.stderr);
    const r = { body: JSON.parse(cli.stdout) as { apply_id: string } };
    const inc = await settled(k, 'fleet', 120_000);
    assert.equal(inc.status, 'error_locked');
    assert.equal(inc.state.greeting, 'v1', 'nothing committed');
    assert.deepEqual(inc.pending_hosts, [], 'a locked run leaves nothing pending');
    const report = (await api(k, 'GET', `/v1/incarnations/fleet/runs/${r.body.apply_id}`)).body;
    assert.equal(report.status, 'failed');
    assert.match(report.error, /over the failure budget of 1; nothing was committed/);
    // Batch 1 spent 1 (within), batch 2 spent the second: batches 3 and 4 never started.
    for (const s of souls.slice(6)) assert.equal(read(s), 'v1\n', `${s.sid} of a later batch was not sent anything`);
    for (const s of [souls[0]!, souls[2]!, souls[3]!, souls[5]!]) assert.equal(read(s), 'v2\n');
    const hosts = new Map(report.hosts.map((h: any) => [h.sid, h.status]));
    for (const s of souls.slice(6)) assert.notEqual(hosts.get(s.sid), 'changed');
  });
});
