// keeperctl activity (issue 31, "An activity stream"): the real program (bin/keeperctl) in its own
// process against a test keeper on the real stack reads back what operators did.
import assert from 'node:assert/strict';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { operatorToken } from '../api/helpers';
import { type Result, runKeeperctl } from '../support/keeperctl-process';

describe('keeperctl activity', function () {
  this.timeout(120_000);
  let k: TestKeeper;

  const ctl = (args: string[], token = k.adminToken) =>
    runKeeperctl(args, { PATH: process.env['PATH'], HOME: k.dir, KEEPER_URL: k.baseUrl, KEEPER_TOKEN: token });
  const ok = (r: Result) => assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);

  before(async () => {
    k = await startTestKeeper();
  });
  after(async () => {
    await k?.stop();
  });

  it('lists what was done, newest first, filtered by actor and target; json pages with --all', async () => {
    ok(await ctl(['archons', 'create', 'alma', '--role', 'operator']));
    ok(await ctl(['archons', 'role', 'alma', '--role', 'viewer']));
    const t = await ctl(['activity']);
    ok(t);
    const lines = t.stdout.trim().split('\n');
    assert.match(lines[0], /^AT\s+ACTOR\s+VIA\s+ACTION\s+TARGET\s+STATUS/);
    assert.match(lines[1], /admin\s+api\s+PATCH \/v1\/archons\/\{aid\}\s+\/v1\/archons\/alma\s+200/);
    assert.match(lines[2], /admin\s+api\s+POST \/v1\/archons\s+\/v1\/archons\s+201/);

    const j = await ctl(['activity', '--target', '/v1/archons/alma', '--limit', '1', '--all', '-o', 'json']);
    ok(j);
    const page = JSON.parse(j.stdout);
    assert.deepEqual(
      page.items.map((x: any) => x.action),
      ['PATCH /v1/archons/{aid}'],
    );
    const none = JSON.parse((await ctl(['activity', '--actor', 'nobody', '-o', 'json'])).stdout);
    assert.deepEqual(none.items, []);
  });

  it('refuses a bad time naming the flag, and a viewer is refused naming the permission', async () => {
    const bad = await ctl(['activity', '--since', 'yesterday']);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /since/);
    const viewer = await operatorToken(k, 'vera', 'viewer');
    const denied = await ctl(['activity'], viewer);
    assert.equal(denied.code, 3, denied.stderr);
    assert.match(denied.stderr, /activity:read/);
  });
});
