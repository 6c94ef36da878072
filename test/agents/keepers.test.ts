// Several keeper instances (distinct kid) on one database and one cache; keeper restarts; a keeper
// that vanishes without releasing its leases; steps dispatched through the hub to a real soul.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { silentLogger } from '../../common/logger';
import { recordConnected } from '../../db/repos/presence';
import { Presence } from '../../hub/presence';
import { SoulNotConnected } from '../../hub/dispatch-errors';
import { loadConfig } from '../../platform/config/load';
import { startKeeper, type RunningKeeper } from '../../keeper/server';
import { cleanupKeeperFiles, prepareKeeperConfig, startTestKeeper, type TestKeeper } from '../support/keeper';
import {
  endpointOf,
  register,
  soulInit,
  soulRun,
  soulStatus,
  uniqueSid,
  waitFor,
  waitForStatus,
  writeSoulConfig,
  type RunningSoul,
} from './harness';

describe('souls across keeper instances and restarts', function () {
  this.timeout(180_000);
  let a: TestKeeper;
  let b: { keeper: RunningKeeper; config: ReturnType<typeof loadConfig>; dir: string } | undefined;
  let dir: string;
  const running: RunningSoul[] = [];

  before(async () => {
    a = await startTestKeeper({ kid: `ka-${randomBytes(2).toString('hex')}` });
    // Keeper B: same database and secret as A, its own kid and ports.
    const files = await prepareKeeperConfig({
      kid: `kb-${randomBytes(2).toString('hex')}`,
      db: a.db,
      secretName: a.secretName,
    });
    const config = loadConfig(files.configFile);
    b = { keeper: await startKeeper(config, silentLogger), config, dir: files.dir };
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'souls-keepers-'));
  });
  after(async () => {
    await Promise.all(running.map((s) => s.kill()));
    await b?.keeper.stop();
    if (b) fs.rmSync(b.dir, { recursive: true, force: true });
    // a.keeper may be a restarted instance that TestKeeper.stop() does not know about.
    await a?.keeper.stop();
    if (a) await cleanupKeeperFiles(a);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const bEndpoint = (priority: number) => ({
    host: 'localhost',
    priority,
    bootstrap_port: Number(b!.config.listen.grpc.bootstrap.addr.split(':')[1]),
    event_stream_port: Number(b!.config.listen.grpc.event_stream.addr.split(':')[1]),
  });

  async function onboard(name: string, endpoints = [endpointOf(a, 10), bEndpoint(20)]) {
    const sid = uniqueSid(name);
    const config = writeSoulConfig(path.join(dir, sid), sid, endpoints);
    const r = await soulInit(sid, config, await register(a, sid));
    assert.equal(r.code, 0, r.stderr);
    return { sid, config };
  }

  it('a soul held by keeper A fails over to keeper B by priority when A stops, and the record names B', async () => {
    const s = await onboard('failover');
    const soul = soulRun(s.sid, s.config);
    running.push(soul);
    assert.equal((await waitForStatus(a, s.sid, 'connected', 20_000, soul)).soul.connected_kid, a.config.kid);
    assert.ok(a.keeper.hub.sessions.isConnected(s.sid));

    await a.keeper.stop();
    const moved = await waitFor(
      'the soul on keeper B',
      async () => {
        const rec = await b!.keeper.hub.presence.get(s.sid);
        return rec?.kid === b!.config.kid ? rec : undefined;
      },
      15_000,
    );
    assert.ok(moved.epoch > 1);
    // A is down; read the registry through B's API listener.
    const viaB = { ...a, baseUrl: `http://${b!.config.listen.openapi.addr}` } as TestKeeper;
    const { soul: rec } = await waitForStatus(viaB, s.sid, 'connected', 20_000, soul);
    assert.equal(rec.connected_kid, b!.config.kid);
    assert.ok(b!.keeper.hub.sessions.isConnected(s.sid));

    // Restart A on the same ports; the test's later cases use it again.
    const restarted = await startKeeper(a.config, silentLogger);
    a.keeper = restarted;
  });

  it('after a keeper restart every soul is connected again with no operator action', async () => {
    const souls = await Promise.all(['r1', 'r2', 'r3'].map((n) => onboard(n, [endpointOf(a, 10)])));
    running.push(...souls.map((s) => soulRun(s.sid, s.config)));
    for (const s of souls) await waitForStatus(a, s.sid, 'connected');

    await a.keeper.stop();
    a.keeper = await startKeeper(a.config, silentLogger);
    for (const s of souls) {
      const { soul } = await waitForStatus(a, s.sid, 'connected', 20_000);
      assert.equal(soul.connected_kid, a.config.kid);
    }
    assert.equal(souls.filter((s) => a.keeper.hub.sessions.isConnected(s.sid)).length, 3);
  });

  it("a keeper that vanishes without releasing: its lease runs out and another keeper's reconciler marks the soul disconnected", async () => {
    const sid = uniqueSid('ghosted');
    await register(a, sid);
    const ghost = new Presence(a.keeper.runtime.cache, 'ghost-keeper', a.config.reaper.lease_ttl_ms);
    const epoch = await ghost.acquire(sid, 'ghost-session');
    assert.ok(
      await recordConnected(a.keeper.runtime.db, { sid, kid: 'ghost-keeper', epoch, soulprint: { fqdn: sid } }),
    );
    assert.equal((await soulStatus(a, sid)).status, 'connected');
    // No refresh: lease_ttl is 3s, the reconciler runs every 500 ms.
    const { ms } = await waitForStatus(a, sid, 'disconnected', 10_000);
    assert.ok(ms >= 1500, `waited for the lease (${ms} ms)`);
  });

  it('dispatches a step to a connected soul, which applies it once and replays it from its ledger', async () => {
    const s = await onboard('worker', [endpointOf(a, 10)]);
    running.push(soulRun(s.sid, s.config));
    await waitForStatus(a, s.sid, 'connected');
    await waitFor('session on A', async () => a.keeper.hub.sessions.isConnected(s.sid));
    const target = path.join(dir, `${s.sid}.txt`);
    const step = {
      applyId: `apply-${randomBytes(4).toString('hex')}`,
      stepIndex: 0,
      module: 'core.file.present',
      params: { path: target, content: 'hello\n' },
    };

    const first = await a.keeper.hub.sessions.sendStep(s.sid, step, { timeoutMs: 20_000 });
    assert.equal(first.ok, true, first.output);
    assert.equal(first.changed, true);
    assert.equal(first.replayed, false);
    assert.equal(fs.readFileSync(target, 'utf8'), 'hello\n');

    const again = await a.keeper.hub.sessions.sendStep(s.sid, step, { timeoutMs: 20_000 });
    assert.equal(again.replayed, true);
    assert.equal(again.changed, true);

    await assert.rejects(
      a.keeper.hub.sessions.sendStep(uniqueSid('nobody'), step, { timeoutMs: 1000 }),
      SoulNotConnected,
    );
  });
});
