// keeperctl against a real keeper and soul: incarnations created and their runs followed, asked,
// failed and retried, reported and planned. The rig and the order of the groups: keeperctl.test.ts.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { TestSoul } from '../runs/keeper';
import type { KeeperctlRig } from './keeperctl-rig';

/** keeperctl: incarnations create and runs: followed, asked, failed and retried, reported, planned. */
export function runsTests(rig: KeeperctlRig): void {
  const { ctl, ok, input } = rig;
  let out: string;
  let souls: TestSoul[];
  // The rig's before() has filled rig.state by now: hooks run in the order they were registered.
  before(() => {
    ({ out, souls } = rig.state);
  });
  it('incarnations create follows the run (plain lines when piped) to ready; get and list show it', async () => {
    const r = await ctl(['incarnations', 'create', 'motd-edge', '--service', 'motd', '--coven', 'edge', ...input()]);
    ok(r);
    assert.match(r.stdout, /succeeded: motd-edge is ready/);
    assert.match(r.stderr, new RegExp(`host ${souls[0]!.sid.replace(/\./g, '\\.')}: changed`));
    assert.doesNotMatch(r.stderr, /\x1b\[/, 'no escape codes when not a terminal');
    assert.match(fs.readFileSync(path.join(out, 'etc', 'motd'), 'utf8'), /from keeperctl/);
    const inc = JSON.parse((await ctl(['incarnations', 'get', 'motd-edge', '-o', 'json'])).stdout);
    assert.equal(inc.status, 'ready');
    assert.equal(inc.state.message, 'from keeperctl');
    const list = JSON.parse((await ctl(['incarnations', 'list', '--status', 'ready', '-o', 'json'])).stdout);
    assert.deepEqual(
      list.items.map((i: any) => i.name),
      ['motd-edge'],
    );
  });

  it('run asks first: without a terminal it needs --yes and starts nothing', async () => {
    const before = JSON.parse((await ctl(['incarnations', 'get', 'motd-edge', '-o', 'json'])).stdout).apply_id;
    const r = await ctl(['run', 'motd-edge', 'create', ...input()]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /pass --yes/);
    assert.equal(JSON.parse((await ctl(['incarnations', 'get', 'motd-edge', '-o', 'json'])).stdout).apply_id, before);
  });

  it('a failed run exits 1 with host, step and reason; unlock --retry with a fixed input goes to ready', async () => {
    const r = await ctl([
      'run',
      'motd-edge',
      'create',
      '--yes',
      ...input(['--input', 'package=keeper-no-such-package-zz']),
    ]);
    assert.equal(r.code, 1, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /failed; motd-edge is error_locked/);
    assert.match(r.stdout, new RegExp(`${souls[0]!.sid.replace(/\./g, '\\.')} step 0 \\(motd package\\): failed`));
    assert.match(r.stdout, /keeperctl incarnations unlock motd-edge --retry/);
    assert.match(r.stderr, /failed \(error_locked\)/);

    const locked = await ctl(['run', 'motd-edge', 'create', '--yes', ...input()]);
    assert.equal(locked.code, 5, 'a locked incarnation refuses a new run (409)');

    const retry = await ctl(['incarnations', 'unlock', 'motd-edge', '--retry', '-o', 'json', ...input()]);
    ok(retry);
    assert.equal(JSON.parse(retry.stdout).status, 'succeeded');
  });

  it('history lists the commits; run-report reads a run; upgrade runs and is followed', async () => {
    const hist = JSON.parse((await ctl(['incarnations', 'history', 'motd-edge', '-o', 'json', '--all'])).stdout);
    assert.ok(hist.items.length >= 2, JSON.stringify(hist));
    const last = hist.items[hist.items.length - 1];
    const rep = JSON.parse(
      (await ctl(['incarnations', 'run-report', 'motd-edge', last.apply_id, '-o', 'json'])).stdout,
    );
    assert.equal(rep.status, 'succeeded');
    assert.equal(rep.hosts[0].sid, souls[0]!.sid);
    // Table mode: how long the run took (created_at to finished_at), not how long keeperctl watched.
    const table = await ctl(['incarnations', 'run-report', 'motd-edge', last.apply_id]);
    ok(table);
    const took = ((Date.parse(rep.finished_at) - Date.parse(rep.created_at)) / 1000).toFixed(1);
    assert.ok(Number(took) > 0, took);
    assert.match(
      table.stderr,
      new RegExp(`run ${last.apply_id.replace(/\./g, '\\.')}: succeeded after ${took.replace('.', '\\.')}s;`),
    );
    const up = await ctl(['incarnations', 'upgrade', 'motd-edge', '-o', 'json']);
    ok(up);
    assert.equal(JSON.parse(up.stdout).status, 'succeeded');
  });

  it('run --plan shows the plan with its diff, asks, and applies exactly that plan', async () => {
    const motd = path.join(out, 'etc', 'motd');
    const before = fs.readFileSync(motd, 'utf8');
    // Not a terminal and no --yes: the plan is shown, nothing is applied.
    const asked = await ctl(['run', 'motd-edge', 'create', '--plan', ...input(['--input', 'message=planned text'])]);
    assert.equal(asked.code, 2, asked.stderr);
    assert.match(asked.stderr, /^plan motd-edge\.create\.plan\.\S+ of motd-edge \(create\): ready$/m);
    assert.match(asked.stderr, /~ step 1 \(motd file\): would update .*motd/);
    assert.match(asked.stderr, /^ {6}-.*from keeperctl.*$/m);
    assert.match(asked.stderr, /^ {6}\+.*planned text.*$/m);
    assert.match(asked.stderr, /not asked: standard input is not a terminal/);
    assert.equal(fs.readFileSync(motd, 'utf8'), before, 'a plan applies nothing');

    const applied = await ctl([
      'run',
      'motd-edge',
      'create',
      '--plan',
      '--yes',
      '-o',
      'json',
      ...input(['--input', 'message=planned text']),
    ]);
    ok(applied);
    const planId = /^plan (\S+) of motd-edge/m.exec(applied.stderr)![1];
    const report = JSON.parse(applied.stdout);
    assert.deepEqual([report.status, report.plan_id], ['succeeded', planId]);
    assert.match(fs.readFileSync(motd, 'utf8'), /planned text/);

    // The same again: nothing would change, nothing is applied.
    const same = await ctl([
      'run',
      'motd-edge',
      'create',
      '--plan',
      '--yes',
      ...input(['--input', 'message=planned text']),
    ]);
    ok(same);
    assert.match(same.stdout, /nothing would change on any host of motd-edge; nothing was applied/);
  });
}
