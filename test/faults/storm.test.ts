// Fault: a reconnect storm. A keeper with a low accept rate (hub.accept_rate 1/s, burst 2) holding
// eight real souls is restarted; the souls all come back at once. The keeper must admit them at its
// rate and tell the others when to retry (RESOURCE_EXHAUSTED, retry-after), and every soul must be
// connected again without any of them giving up (its process still running).
import assert from 'node:assert/strict';
import { api, waitFor } from '../runs/keeper';
import { startRig, type Rig } from './rig';

const SOULS = 8;

async function busyRefusals(metricsAddr: string): Promise<number> {
  const text = await (await fetch(`http://${metricsAddr}/metrics`)).text();
  const line = text
    .split('\n')
    .find(
      (l) =>
        l.startsWith('keeper_handshakes_total{') &&
        l.includes('listener="event_stream"') &&
        l.includes('outcome="busy"'),
    );
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

function lines(stderr: string, msg: string): number {
  return stderr.split('\n').filter((l) => l.includes(`"msg":"${msg}"`)).length;
}

describe('fault: a reconnect storm against a keeper with a low accept rate', function () {
  this.timeout(240_000);
  let rig: Rig;

  before(async () => {
    rig = await startRig({
      covens: Array.from({ length: SOULS }, () => ['web']),
      mutate: (doc) => {
        doc.hub = { accept_rate: { per_second: 1, burst: 2 } };
      },
    });
  });
  after(async () => {
    await rig?.stop();
  });

  it('admits the souls at its rate, tells the others when to retry, and all are connected again; none gave up', async () => {
    const busyBefore = rig.souls.map((s) => lines(s.run.log.stderr, 'keeper busy'));
    const welcomesBefore = rig.souls.map((s) => lines(s.run.log.stderr, 'connected'));
    const connected = async () => {
      const r = await api(rig.k, 'GET', '/v1/souls?limit=100');
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return (r.body.items as { sid: string; status: string }[]).filter((s) => s.status === 'connected').length;
    };
    assert.equal(await connected(), SOULS, 'every soul connected before the restart');

    const t0 = Date.now();
    await rig.restartKeeper();
    const ready = Date.now();
    // A new Welcome on every soul (its log) and the registry showing all of them connected.
    const welcomed = () => rig.souls.every((s, i) => lines(s.run.log.stderr, 'connected') > welcomesBefore[i]!);
    await waitFor(
      'every soul connected again',
      async () => welcomed() && (await connected()) === SOULS,
      120_000,
      100,
    ).catch((err: Error) => {
      err.message += `\n--- keeper log ---\n${rig.keeper.log.stderr.slice(-3000)}`;
      throw err;
    });
    const back = Date.now();
    const refused = await busyRefusals(rig.k.config.listen.metrics.addr);
    const told = rig.souls.map((s, i) => lines(s.run.log.stderr, 'keeper busy') - busyBefore[i]!);
    console.log(
      `      ${SOULS} souls connected again ${back - ready} ms after the keeper was ready (${back - t0} ms after the stop); ` +
        `${refused} streams refused over the accept rate; souls told to retry: ${told.filter((n) => n > 0).length}`,
    );

    // Eight souls at 1/s with a burst of 2 cannot all be admitted at once: some were told to retry.
    assert.ok(refused > 0, 'the keeper refused streams over its accept rate');
    assert.ok(
      told.some((n) => n > 0),
      'souls logged the keeper busy answer',
    );
    // And they came back at the slots they were given, not in a tight loop: at 1/s the keeper hands
    // out one slot a second, so the whole storm is a handful of refusals per soul at most.
    assert.ok(refused <= SOULS * 4, `${refused} refusals for ${SOULS} souls: the souls honoured retry-after`);
    for (const s of rig.souls) {
      assert.equal(
        s.run.child.exitCode,
        null,
        `${s.sid} still running (it did not give up)\n${s.run.log.stderr.slice(-1500)}`,
      );
    }
  });
});
