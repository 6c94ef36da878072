// keeperctl against a real keeper and soul: scheduled drift checks and deleting incarnations.
// The rig and the order of the groups: keeperctl.test.ts.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../support/repo';
import { gitRepoFrom, type TestSoul } from '../runs/keeper';
import type { KeeperctlRig } from './keeperctl-rig';

/** keeperctl: drift checks and deleting incarnations. */
export function incarnationsTests(rig: KeeperctlRig): void {
  const { ctl, ok } = rig;
  let root: string;
  let souls: TestSoul[];
  // The rig's before() has filled rig.state by now: hooks run in the order they were registered.
  before(() => {
    ({ root, souls } = rig.state);
  });
  /** `incarnations create NAME <service> --coven edge`, its files under `out`: one to delete. */
  const createOnEdge = async (name: string, service: string[], out: string) =>
    ok(
      await ctl([
        'incarnations',
        'create',
        name,
        ...service,
        '--coven',
        'edge',
        '--input',
        `root=${out}`,
        '--input',
        'package=git',
        '-o',
        'json',
      ]),
    );
  it('incarnations drift --interval 2s checks on a schedule (get shows in_sync), --off stops; neither is a usage error', async () => {
    const neither = await ctl(['incarnations', 'drift', 'motd-edge']);
    assert.equal(neither.code, 2, neither.stderr);
    assert.match(neither.stderr, /give either --interval <duration> or --off/);
    const tooOften = await ctl(['incarnations', 'drift', 'motd-edge', '--interval', '1s']);
    assert.equal(tooOften.code, 2, tooOften.stderr);
    assert.match(tooOften.stderr, /\/body\/interval/);

    const on = await ctl(['incarnations', 'drift', 'motd-edge', '--interval', '2s', '-o', 'json']);
    ok(on);
    assert.deepEqual([JSON.parse(on.stdout).drift.interval, JSON.parse(on.stdout).drift.auto_repair], ['2s', false]);
    let drift: any;
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline) {
      drift = JSON.parse((await ctl(['incarnations', 'get', 'motd-edge', '-o', 'json'])).stdout).drift;
      if (drift.status !== 'unchecked') break;
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.equal(drift.status, 'in_sync', JSON.stringify(drift));
    // A check in sync keeps its plan only until the next check is recorded (docs/drift.md): every
    // hour from now on, so the plan shown stays to be read (a check already under way may still
    // replace it once: then the new one is read).
    ok(await ctl(['incarnations', 'drift', 'motd-edge', '--interval', '1h']));
    let checked: any;
    let text = '';
    for (let attempt = 0; attempt < 3; attempt++) {
      drift = JSON.parse((await ctl(['incarnations', 'get', 'motd-edge', '-o', 'json'])).stdout).drift;
      const json = await ctl(['incarnations', 'plan-report', 'motd-edge', drift.plan_id, '-o', 'json']);
      const plain = await ctl(['incarnations', 'plan-report', 'motd-edge', drift.plan_id]);
      if (json.code !== 0 || plain.code !== 0) continue;
      checked = JSON.parse(json.stdout);
      text = plain.stdout;
      break;
    }
    assert.equal(drift.status, 'in_sync', JSON.stringify(drift));
    assert.match(
      drift.plan_id,
      /^motd-edge\.create\.drift\./,
      'a plan of the last committed operation, made by the drift check',
    );
    assert.deepEqual(drift.drifted_sids, []);
    assert.ok(drift.checks_in_sync >= 1, JSON.stringify(drift));
    assert.deepEqual([checked?.plan_id, checked?.status, checked?.summary.would_change], [drift.plan_id, 'ready', 0]);
    assert.match(text, new RegExp(`^no change on 1 host\\(s\\): ${souls[0]!.sid.replace(/\./g, '\\.')}$`, 'm'));
    const shown = (await ctl(['incarnations', 'get', 'motd-edge'])).stdout;
    assert.match(shown, /^drift:\s+every 1h: in_sync at \S+$/m);
    assert.match(shown, /^drift_in_sync:\s+[1-9]\d* checks?, the last at \S+$/m);
    assert.match((await ctl(['incarnations', 'list'])).stdout, /^motd-edge\s+.*\sin_sync\s/m);

    const off = await ctl(['incarnations', 'drift', 'motd-edge', '--off']);
    ok(off);
    assert.match(off.stdout, /^motd-edge: drift checks off$/m);
    const got = JSON.parse((await ctl(['incarnations', 'get', 'motd-edge', '-o', 'json'])).stdout);
    assert.equal(got.drift.interval, null);
    assert.match((await ctl(['incarnations', 'get', 'motd-edge'])).stdout, /^drift:\s+off$/m);
  });

  it('incarnations delete asks first; a service without destroy is 409 (exit 5); with destroy it runs and frees the name; --force removes the record only; create --version', async () => {
    const noDestroy = await ctl(['incarnations', 'delete', 'motd-edge', '--yes']);
    assert.equal(noDestroy.code, 5, noDestroy.stderr);
    assert.match(noDestroy.stderr, /Conflict: service motd@v4 has no destroy operation/);
    assert.match(noDestroy.stderr, /keeperctl incarnations delete motd-edge --force/);
    assert.equal(JSON.parse((await ctl(['incarnations', 'get', 'motd-edge', '-o', 'json'])).stdout).status, 'ready');

    // A service with destroy: the fixture plus a destroy scenario that leaves a visible farewell.
    const src = path.join(root, 'motd-d-src');
    fs.cpSync(path.join(repoRoot(), 'test', 'fixtures', 'services', 'motd'), src, { recursive: true });
    fs.mkdirSync(path.join(src, 'scenario', 'destroy'), { recursive: true });
    fs.writeFileSync(
      path.join(src, 'scenario', 'destroy', 'main.yml'),
      [
        'description: Take the message of the day down.',
        'input:',
        '  root:',
        '    type: string',
        'tasks:',
        '  - name: motd file',
        '    module: core.file.present',
        '    params:',
        '      path: "${input.root}/etc/motd"',
        '      content: "decommissioned\\n"',
        '      mode: "0644"',
        '',
      ].join('\n'),
    );
    ok(
      await ctl([
        'services',
        'add',
        'motd-d',
        '--git',
        gitRepoFrom(src, path.join(root, 'motd-d.git'), 'v1'),
        '--ref',
        'v1',
      ]),
    );
    const gone = path.join(root, 'out-gone');
    await createOnEdge('motd-gone', ['--service', 'motd-d'], gone);

    const unasked = await ctl(['incarnations', 'delete', 'motd-gone']);
    assert.equal(unasked.code, 2, unasked.stderr);
    assert.match(unasked.stderr, /run destroy on every host of motd-gone and then remove it\? \(not asked/);
    const del = await ctl(['incarnations', 'delete', 'motd-gone', '--yes']);
    ok(del);
    assert.match(del.stdout, /succeeded: motd-gone is destroyed and removed/);
    assert.equal(fs.readFileSync(path.join(gone, 'etc', 'motd'), 'utf8'), 'decommissioned\n');
    const missing = await ctl(['incarnations', 'get', 'motd-gone']);
    assert.equal(missing.code, 4, missing.stderr);
    const runs = JSON.parse((await ctl(['incarnations', 'runs', 'motd-gone', '-o', 'json'])).stdout);
    assert.deepEqual(
      runs.items.map((r: any) => [r.operation, r.status]),
      [
        ['destroy', 'succeeded'],
        ['create', 'succeeded'],
      ],
      'its runs stay readable',
    );

    const forcedOut = path.join(root, 'out-forced');
    await createOnEdge('motd-forced', ['--service', 'motd', '--version', 'v3'], forcedOut);
    const created = JSON.parse((await ctl(['incarnations', 'get', 'motd-forced', '-o', 'json'])).stdout);
    assert.deepEqual(
      ['version', 'newer_version'].map((f) => created[f]),
      ['v3', 'v4'],
    );
    const forced = await ctl(['incarnations', 'delete', 'motd-forced', '--force', '--yes', '-o', 'json']);
    ok(forced);
    assert.deepEqual(JSON.parse(forced.stdout), {
      name: 'motd-forced',
      removed: true,
      forced: true,
      history: '/v1/incarnations/motd-forced/history',
    });
    assert.equal((await ctl(['incarnations', 'get', 'motd-forced'])).code, 4);
    assert.ok(fs.existsSync(path.join(forcedOut, 'etc', 'motd')), 'force touches no host');
    assert.equal(
      JSON.parse((await ctl(['incarnations', 'history', 'motd-forced', '-o', 'json'])).stdout).items.length,
      1,
      'its history stays readable',
    );
    const twice = await ctl(['incarnations', 'delete', 'motd-forced', '--force', '--yes']);
    assert.equal(twice.code, 4, twice.stderr);
  });
}
