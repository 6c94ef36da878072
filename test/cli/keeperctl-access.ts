// keeperctl against a real keeper: logging in to clusters, and how refusals exit (not found, bad
// input, usage, permission). The rig and the order of the groups: keeperctl.test.ts.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { TestKeeper } from '../support/keeper';
import type { KeeperctlRig } from './keeperctl-rig';

/** keeperctl: login, the saved clusters and the environment override. */
export function clustersTests(rig: KeeperctlRig): void {
  const { ctl, ok } = rig;
  let k: TestKeeper;
  let root: string;
  let home: string;
  // The rig's before() has filled rig.state by now: hooks run in the order they were registered.
  before(() => {
    ({ k, root, home } = rig.state);
  });
  it('login saves the cluster and a 0600 token, refuses a bad token and saves nothing then', async () => {
    const bad = path.join(root, 'bad.jwt');
    fs.writeFileSync(bad, 'eyJhbGciOiJIUzI1NiJ9.e30.invalid');
    const refused = await ctl(['login', 'test', '--url', k.baseUrl, '--token-file', bad]);
    assert.equal(refused.code, 3, refused.stderr);
    assert.match(refused.stderr, /does not accept this token/);
    assert.equal(fs.existsSync(path.join(home, '.config', 'keeper', 'config.yml')), false);

    ok(await ctl(['login', 'test', '--url', k.baseUrl, '--token-file', path.join(root, 'admin.jwt')]));
    const tokenFile = path.join(home, '.config', 'keeper', 'tokens', 'test');
    assert.equal(fs.statSync(tokenFile).mode & 0o777, 0o600);
    assert.equal(fs.readFileSync(tokenFile, 'utf8').trim(), k.adminToken);
    const clusters = JSON.parse((await ctl(['clusters', '-o', 'json'])).stdout);
    assert.equal(clusters.current, 'test');
    assert.deepEqual(
      clusters.clusters.map((c: any) => [c.name, c.url]),
      [['test', k.baseUrl]],
    );
  });

  it('a second cluster by name; use switches; KEEPER_URL/KEEPER_TOKEN override the file', async () => {
    const viaStdin = await ctl(['login', 'other', '--url', k.baseUrl, '--token-stdin'], { input: `${k.adminToken}\n` });
    ok(viaStdin);
    assert.equal(JSON.parse((await ctl(['clusters', '-o', 'json'])).stdout).current, 'other');
    ok(await ctl(['use', 'test']));
    assert.equal(JSON.parse((await ctl(['clusters', '-o', 'json'])).stdout).current, 'test');
    ok(await ctl(['logout', 'other']));
    assert.equal(JSON.parse((await ctl(['clusters', '-o', 'json'])).stdout).clusters.length, 1);
    // The environment wins over the saved cluster: a wrong URL there is used, and fails as a network error.
    const env = await ctl(['souls', 'list'], { env: { KEEPER_URL: 'http://127.0.0.1:9', KEEPER_TOKEN: k.adminToken } });
    assert.equal(env.code, 6, env.stderr);
    assert.match(env.stderr, /cannot reach the keeper at http:\/\/127\.0\.0\.1:9/);
  });
}

/** keeperctl: the exit codes of refusals (not found, bad input, usage, permission) and archons. */
export function accessTests(rig: KeeperctlRig): void {
  const { ctl, ok } = rig;
  let k: TestKeeper;
  // The rig's before() has filled rig.state by now: hooks run in the order they were registered.
  before(() => {
    ({ k } = rig.state);
  });
  it('not found is exit 4; input the API refuses is exit 2 with the field; usage errors are exit 2', async () => {
    const missing = await ctl(['souls', 'get', 'nobody.keeper.test']);
    assert.equal(missing.code, 4);
    assert.match(missing.stderr, /Not Found: soul nobody\.keeper\.test is not registered/);

    const invalid = await ctl(['souls', 'add', 'short', '--coven', 'web']);
    assert.equal(invalid.code, 2, invalid.stderr);
    assert.match(invalid.stderr, /Bad Request: /);
    assert.match(invalid.stderr, /\/params\/sid|\/body\/sid/);

    const usage = await ctl(['souls', 'frobnicate']);
    assert.equal(usage.code, 2);
    const badInput = await ctl(['run', 'x', 'create', '--input', 'no-equals-sign', '--yes']);
    assert.equal(badInput.code, 2);
    assert.match(badInput.stderr, /is not key=value/);
  });

  it('archons create and token; a viewer gets exit 3 naming the missing permission; a bad token exit 3', async () => {
    ok(await ctl(['archons', 'create', 'vic', '--role', 'viewer']));
    const tok = JSON.parse((await ctl(['archons', 'token', 'vic', '-o', 'json'])).stdout);
    assert.equal(tok.role, 'viewer');
    const list = JSON.parse((await ctl(['archons', 'list', '-o', 'json'])).stdout);
    assert.deepEqual(list.items.map((a: any) => a.aid).sort(), ['admin', 'vic']);
    assert.equal(JSON.parse((await ctl(['archons', 'get', 'vic', '-o', 'json'])).stdout).role, 'viewer');

    const asViewer = { KEEPER_URL: k.baseUrl, KEEPER_TOKEN: tok.token };
    ok(await ctl(['souls', 'list'], { env: asViewer }));
    const denied = await ctl(['souls', 'add', 'vic-host.keeper.test', '--coven', 'web'], { env: asViewer });
    assert.equal(denied.code, 3);
    assert.match(denied.stderr, /Forbidden: /);
    assert.match(denied.stderr, /lacks the permission souls:create/);

    const unauth = await ctl(['souls', 'list'], { env: { KEEPER_URL: k.baseUrl, KEEPER_TOKEN: 'not-a-jwt' } });
    assert.equal(unauth.code, 3);
    assert.match(unauth.stderr, /Unauthorized: /);
  });
}
