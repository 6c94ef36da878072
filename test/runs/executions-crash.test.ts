// A keeper killed with SIGKILL while every host of a one-off execution is in the middle of a slow
// command, then started again with the same config: the execution still ends with every host's own
// answer (none `unknown`), and the command ran once per host. The keeper is its own process
// (`bin/keeper run`) so the kill is real; the retried dispatch re-sends the execution's ledger key
// and each soul answers from its ledger instead of running the command again.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  api,
  initRunKeeper,
  spawnKeeper,
  startSouls,
  stopRunRig,
  tempDir,
  waitFor,
  type KeeperProcess,
  type TestSoul,
} from './keeper';

describe('one-off executions survive a keeper killed mid-command (SIGKILL, restart, once per host)', function () {
  this.timeout(300_000);
  let k: Awaited<ReturnType<typeof initRunKeeper>>;
  let keeper: KeeperProcess | undefined;
  let root: string;
  let souls: TestSoul[] = [];

  before(async () => {
    root = tempDir('executions-crash-');
    k = await initRunKeeper();
    keeper = await spawnKeeper(k);
    souls = await startSouls(k, path.join(root, 'souls'), [['web'], ['web'], ['web']]);
  });
  after(() => stopRunRig({ souls, k, keeper, root }));

  it('ends with every host changed and its output, each command run once, after kill -9 and restart', async () => {
    const ran = path.join(root, 'ran');
    const lines = () => (fs.existsSync(ran) ? fs.readFileSync(ran, 'utf8').split('\n').filter(Boolean) : []);
    // Each run appends its soul's pid (the shell's parent), then takes 6 s: the kill lands mid-command.
    const r = await api(k, 'POST', '/v1/executions', {
      module: 'core.cmd.run',
      params: { argv: [`echo $PPID >> ${ran}; sleep 6; echo finished`], shell: true },
      target: { covens: ['web'] },
      timeout: 120,
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const id: string = r.body.id;
    await waitFor('the command started on every host', async () => lines().length === 3, 30_000, 50);
    const before = await api(k, 'GET', `/v1/executions/${id}`);
    assert.equal(before.body.status, 'running');
    assert.equal(before.body.hosts.length, 0, 'no host had answered when the keeper was killed');
    keeper!.child.kill('SIGKILL');
    await keeper!.exited;

    keeper = await spawnKeeper(k);
    let last: any;
    const e = await waitFor(
      `execution ${id} after the restart`,
      async () => {
        last = (await api(k, 'GET', `/v1/executions/${id}`)).body;
        return last.status === 'done' ? last : undefined;
      },
      120_000,
      200,
    ).catch((err: Error) => {
      err.message += `\n--- execution ---\n${JSON.stringify(last)}\n--- keeper log ---\n${keeper!.log.stderr.slice(-3000)}`;
      throw err;
    });
    assert.deepEqual(e.summary, { ok: 0, changed: 3, failed: 0, unknown: 0 }, JSON.stringify(e.hosts));
    assert.deepEqual(e.hosts.map((h: any) => h.sid).sort(), souls.map((s) => s.sid).sort());
    for (const h of e.hosts) assert.match(h.output, /exit 0[\s\S]*finished/, `${h.sid}: ${h.output}`);
    // Once per host: three lines, from three different souls, and no more after the restart.
    assert.equal(lines().length, 3, lines().join(','));
    assert.equal(new Set(lines()).size, 3, lines().join(','));
  });
});
