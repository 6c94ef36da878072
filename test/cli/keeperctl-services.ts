// keeperctl against a real keeper: services registered and published, versions listed and upgraded to.
// The rig and the order of the groups: keeperctl.test.ts.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '../support/repo';
import { gitRepoFrom } from '../runs/keeper';
import type { KeeperctlRig } from './keeperctl-rig';

/** keeperctl: registering a service. */
export function servicesAddTests(rig: KeeperctlRig): void {
  const { ctl, ok } = rig;
  let root: string;
  // The rig's before() has filled rig.state by now: hooks run in the order they were registered.
  before(() => {
    ({ root } = rig.state);
  });
  it('services add, list, get', async () => {
    const url = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'motd'),
      path.join(root, 'motd.git'),
      'v3',
    );
    ok(await ctl(['services', 'add', 'motd', '--git', url, '--ref', 'v3']));
    const dup = await ctl(['services', 'add', 'motd', '--git', url, '--ref', 'v3']);
    assert.equal(dup.code, 5);
    assert.deepEqual(
      JSON.parse((await ctl(['services', 'list', '-o', 'json'])).stdout).items.map((s: any) => s.name),
      ['motd'],
    );
    assert.match((await ctl(['services', 'get', 'motd'])).stdout, /version:\s+v3/);
  });
}

/** keeperctl: publishing versions and upgrading to one. */
export function servicesPublishTests(rig: KeeperctlRig): void {
  const { ctl, ok } = rig;
  let root: string;
  // The rig's before() has filled rig.state by now: hooks run in the order they were registered.
  before(() => {
    ({ root } = rig.state);
  });
  it('services publish, versions and version; a second publish is 409 (exit 5), an unknown version 404 (exit 4); get/list show the newer version; upgrade --version moves to it', async () => {
    const repo = path.join(root, 'motd.git');
    execFileSync('git', ['-C', repo, 'tag', 'v4'], { stdio: 'pipe' });
    const commit = execFileSync('git', ['-C', repo, 'rev-parse', 'v4^{commit}']).toString().trim();
    const pub = await ctl(['services', 'publish', 'motd', 'v4', '-o', 'json']);
    ok(pub);
    const published = JSON.parse(pub.stdout);
    assert.deepEqual(
      [published.service, published.version, published.commit, published.state_schema_version, published.published_by],
      ['motd', 'v4', commit, 3, 'admin'],
    );
    const again = await ctl(['services', 'publish', 'motd', 'v4']);
    assert.equal(again.code, 5, again.stderr);
    assert.match(again.stderr, /Conflict: version v4 of service motd is already published/);

    const versions = JSON.parse((await ctl(['services', 'versions', 'motd', '-o', 'json'])).stdout);
    assert.deepEqual(
      versions.items.map((v: any) => v.version),
      ['v4', 'v3'],
      'newest first',
    );
    const versionsTable = await ctl(['services', 'versions', 'motd']);
    ok(versionsTable);
    assert.match(versionsTable.stdout.split('\n')[0]!, /^VERSION\s+COMMIT\s+SCHEMA\s+PUBLISHED BY\s+PUBLISHED$/);
    assert.match(versionsTable.stdout, new RegExp(`^v4\\s+${commit}\\s+3\\s+admin\\s`, 'm'));

    const v3 = JSON.parse((await ctl(['services', 'version', 'motd', 'v3', '-o', 'json'])).stdout);
    assert.deepEqual(
      v3.operations.map((o: any) => o.name),
      ['create', 'update'],
    );
    assert.deepEqual(
      v3.operations[0].inputs.find((i: any) => i.name === 'message'),
      { name: 'message', type: 'string', required: false, secret: false, default: 'Welcome' },
    );
    const v3Table = (await ctl(['services', 'version', 'motd', 'v3'])).stdout;
    assert.match(v3Table, /^OPERATION\s+INPUT\s+TYPE\s+REQUIRED\s+DEFAULT\s+SECRET$/m);
    assert.match(v3Table, /^create\s+message\s+string\s+no\s+"Welcome"\s+no$/m);
    assert.match(v3Table, /^update\s+message\s+string\s+yes\s+-\s+no$/m);
    const unknown = await ctl(['services', 'version', 'motd', 'v9']);
    assert.equal(unknown.code, 4, unknown.stderr);
    assert.match(unknown.stderr, /Not Found: version v9 of service motd is not published/);

    const inc = JSON.parse((await ctl(['incarnations', 'get', 'motd-edge', '-o', 'json'])).stdout);
    assert.deepEqual([inc.version, inc.newer_version], ['v3', 'v4']);
    assert.match(
      (await ctl(['incarnations', 'get', 'motd-edge'])).stdout,
      /^newer_version:\s+v4 \(keeperctl incarnations upgrade motd-edge --version v4\)$/m,
    );
    const listTable = (await ctl(['incarnations', 'list'])).stdout;
    assert.match(listTable.split('\n')[0]!, /^NAME\s+SERVICE\s+VERSION\s+NEWER\s+STATUS\s+COVENS\s+DRIFT\s+LAST RUN$/);
    assert.match(listTable, /^motd-edge\s+motd\s+v3\s+v4\s+ready\s+edge\s+off\s+/m);

    const up = await ctl(['incarnations', 'upgrade', 'motd-edge', '--version', 'v4', '-o', 'json']);
    ok(up);
    assert.equal(JSON.parse(up.stdout).status, 'succeeded');
    const after = JSON.parse((await ctl(['incarnations', 'get', 'motd-edge', '-o', 'json'])).stdout);
    assert.deepEqual([after.version, after.newer_version], ['v4', null]);
  });
}
