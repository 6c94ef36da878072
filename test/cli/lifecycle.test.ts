// keeperctl taking back what was added and issued (issue 31, "Remove and revoke"): the real program
// (bin/keeperctl) in its own process against a test keeper on the real stack.
import assert from 'node:assert/strict';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { serviceRepo } from '../support/service-repo';
import { type Result, runKeeperctl } from '../support/keeperctl-process';

describe('keeperctl: remove and revoke', function () {
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

  it('archons revoke-tokens: the old token is refused (exit 3, naming the fix), a new one works', async () => {
    ok(await ctl(['archons', 'create', 'rosa', '--role', 'operator']));
    const old = JSON.parse((await ctl(['archons', 'token', 'rosa', '-o', 'json'])).stdout).token as string;
    ok(await ctl(['souls', 'list'], old));
    const r = await ctl(['archons', 'revoke-tokens', 'rosa']);
    ok(r);
    assert.match(
      r.stdout,
      /^revoked the tokens of rosa issued before \S+; issue a new one with: keeperctl archons token rosa$/m,
    );
    const refused = await ctl(['souls', 'list'], old);
    assert.equal(refused.code, 3, refused.stderr);
    assert.match(refused.stderr, /tokens of operator rosa issued before .* were revoked/);
    const fresh = JSON.parse((await ctl(['archons', 'token', 'rosa', '-o', 'json'])).stdout).token as string;
    ok(await ctl(['souls', 'list'], fresh));
    const unknown = await ctl(['archons', 'revoke-tokens', 'nobody']);
    assert.equal(unknown.code, 4, unknown.stderr);
    const help = await ctl(['archons', 'revoke-tokens', '--help']);
    ok(help);
    assert.match(help.stdout, /Examples:\n\s+keeperctl archons revoke-tokens alice/);
  });

  it('archons revoke-tokens --jti: only the token whose calls activity shows is refused (exit 3); the other works', async () => {
    ok(await ctl(['archons', 'create', 'jude', '--role', 'operator']));
    const leaked = JSON.parse((await ctl(['archons', 'token', 'jude', '-o', 'json'])).stdout).token as string;
    const kept = JSON.parse((await ctl(['archons', 'token', 'jude', '-o', 'json'])).stdout).token as string;
    // A call made with the leaked token: the activity stream names its jti.
    ok(await ctl(['souls', 'add', 'jude-host.keeper.test', '--coven', 'web'], leaked));
    const rows = JSON.parse((await ctl(['activity', '--actor', 'jude', '-o', 'json'])).stdout).items;
    const jti = rows[0].jti as string;
    assert.match(jti, /^[0-9a-f-]{36}$/);
    const r = await ctl(['archons', 'revoke-tokens', 'jude', '--jti', jti]);
    ok(r);
    assert.match(r.stdout, new RegExp(`^revoked token ${jti} of jude; its other tokens keep working$`, 'm'));
    const refused = await ctl(['souls', 'list'], leaked);
    assert.equal(refused.code, 3, refused.stderr);
    assert.match(refused.stderr, new RegExp(`token ${jti} of operator jude was revoked`));
    ok(await ctl(['souls', 'list'], kept));
    const bad = await ctl(['archons', 'revoke-tokens', 'jude', '--jti', 'nope']);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /jti/);
  });

  it('archons role and delete: the last cluster-admin is refused (exit 5, naming the rule); delete needs --yes without a terminal', async () => {
    const last = await ctl(['archons', 'delete', 'admin', '--yes']);
    assert.equal(last.code, 5, last.stderr);
    assert.match(last.stderr, /operator admin is the last cluster-admin/);
    const demote = await ctl(['archons', 'role', 'admin', '--role', 'viewer']);
    assert.equal(demote.code, 5, demote.stderr);

    ok(await ctl(['archons', 'create', 'vera', '--role', 'viewer']));
    const t = JSON.parse((await ctl(['archons', 'token', 'vera', '-o', 'json'])).stdout).token as string;
    const role = await ctl(['archons', 'role', 'vera', '--role', 'operator']);
    ok(role);
    assert.match(role.stdout, /^operator vera now has the role operator$/m);
    ok(await ctl(['souls', 'add', 'vera-host.keeper.test', '--coven', 'web'], t));

    const unasked = await ctl(['archons', 'delete', 'vera']);
    assert.equal(unasked.code, 2, unasked.stderr);
    assert.match(unasked.stderr, /pass --yes/);
    ok(await ctl(['souls', 'list'], t));
    const del = await ctl(['archons', 'delete', 'vera', '--yes', '-o', 'json']);
    ok(del);
    assert.deepEqual(JSON.parse(del.stdout), { aid: 'vera', deleted: true });
    const gone = await ctl(['souls', 'list'], t);
    assert.equal(gone.code, 3, gone.stderr);
    assert.match(gone.stderr, /operator vera no longer exists/);
    for (const c of ['role', 'delete'])
      assert.match((await ctl(['archons', c, '--help'])).stdout, /Examples:\n\s+keeperctl archons /);
  });

  it('services delete asks first, removes the service, and an unknown one is exit 4', async () => {
    const repo = serviceRepo({ tags: ['v1'] });
    ok(await ctl(['services', 'add', 'scratch', '--git', repo.url, '--ref', 'v1']));
    const unasked = await ctl(['services', 'delete', 'scratch']);
    assert.equal(unasked.code, 2, unasked.stderr);
    ok(await ctl(['services', 'get', 'scratch']));
    const del = await ctl(['services', 'delete', 'scratch', '--yes']);
    ok(del);
    assert.match(del.stdout, /^removed service scratch$/m);
    assert.equal((await ctl(['services', 'get', 'scratch'])).code, 4);
    assert.equal((await ctl(['services', 'delete', 'scratch', '--yes'])).code, 4);
    assert.match((await ctl(['services', 'delete', '--help'])).stdout, /Examples:\n\s+keeperctl services delete /);
  });

  it('services yank withdraws a version with a reason; versions and version show it; a create with it is exit 5', async () => {
    const repo = serviceRepo({ tags: ['v1', 'v2'] });
    ok(await ctl(['services', 'add', 'banner', '--git', repo.url, '--ref', 'v1']));
    ok(await ctl(['services', 'publish', 'banner', 'v2']));
    const y = await ctl(['services', 'yank', 'banner', 'v2', '--reason', 'breaks the banner']);
    ok(y);
    assert.match(y.stdout, /^yanked banner v2: breaks the banner$/m);
    const versions = (await ctl(['services', 'versions', 'banner'])).stdout.split('\n');
    assert.match(versions.find((l) => l.startsWith('v2'))!, /^v2 \(yanked: breaks the banner\)\s/);
    assert.match(
      (await ctl(['services', 'version', 'banner', 'v2'])).stdout,
      /^yanked:\s+breaks the banner \(by admin at \S+\)$/m,
    );
    const refused = await ctl([
      'incarnations',
      'create',
      'banner-x',
      '--service',
      'banner',
      '--version',
      'v2',
      '--coven',
      'nobody',
      '--no-follow',
    ]);
    assert.equal(refused.code, 5, refused.stderr);
    assert.match(refused.stderr, /version v2 of service banner was yanked at .* by admin: breaks the banner/);
    const missingReason = await ctl(['services', 'yank', 'banner', 'v1']);
    assert.equal(missingReason.code, 2, missingReason.stderr);
    assert.match(missingReason.stderr, /reason/);
    assert.match((await ctl(['services', 'yank', '--help'])).stdout, /Examples:\n\s+keeperctl services yank /);
  });
});
