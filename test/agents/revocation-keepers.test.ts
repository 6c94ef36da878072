// Revocation with two keepers (issue 13): the operator revokes through keeper A's API while the
// soul's stream is held by keeper B. The revocation travels on the cache's channel, so B closes the
// stream within seconds, the soul stops with the reason, and neither keeper admits the certificate.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { silentLogger } from '../../common/logger';
import { loadConfig } from '../../platform/config/load';
import { startKeeper, type RunningKeeper } from '../../keeper/server';
import { prepareKeeperConfig, startTestKeeper, type TestKeeper } from '../support/keeper';
import {
  api,
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

describe('revocation across two keepers (real souls)', function () {
  this.timeout(120_000);
  let a: TestKeeper;
  let b: { keeper: RunningKeeper; config: ReturnType<typeof loadConfig>; dir: string } | undefined;
  let dir: string;
  const running: RunningSoul[] = [];

  before(async () => {
    a = await startTestKeeper({ kid: `ra-${randomBytes(2).toString('hex')}` });
    const files = await prepareKeeperConfig({
      kid: `rb-${randomBytes(2).toString('hex')}`,
      db: a.db,
      secretName: a.secretName,
    });
    const config = loadConfig(files.configFile);
    b = { keeper: await startKeeper(config, silentLogger), config, dir: files.dir };
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'souls-revoke-keepers-'));
  });
  after(async () => {
    await Promise.all(running.map((s) => s.kill()));
    await b?.keeper.stop();
    if (b) fs.rmSync(b.dir, { recursive: true, force: true });
    await a?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const handshakes = async (metricsUrl: string, outcome: string) => {
    const text = await (await fetch(`${metricsUrl}/metrics`)).text();
    const line = text
      .split('\n')
      .find((l) => l.startsWith(`keeper_handshakes_total{listener="event_stream",outcome="${outcome}"`));
    return line ? Number(line.split(' ').pop()) : 0;
  };

  it('a revoke through keeper A closes the stream that keeper B holds within 5 s; B refuses the certificate afterwards', async () => {
    const sid = uniqueSid('revoke-b');
    const bEndpoint = {
      host: 'localhost',
      priority: 10,
      bootstrap_port: Number(b!.config.listen.grpc.bootstrap.addr.split(':')[1]),
      event_stream_port: Number(b!.config.listen.grpc.event_stream.addr.split(':')[1]),
    };
    // B first by priority, so the stream lands on the keeper whose API is not asked.
    const config = writeSoulConfig(path.join(dir, sid), sid, [bEndpoint, endpointOf(a, 20)]);
    assert.equal((await soulInit(sid, config, await register(a, sid))).code, 0);
    const soul = soulRun(sid, config);
    running.push(soul);
    const rec = await waitForStatus(a, sid, 'connected', 20_000, soul);
    assert.equal(rec.soul.connected_kid, b!.config.kid, 'the stream is on keeper B');
    assert.ok(b!.keeper.hub.sessions.isConnected(sid));

    const r = await api(a, 'POST', `/v1/souls/${sid}/revoke`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const ended = await Promise.race([soul.done, new Promise<null>((res) => setTimeout(() => res(null), 5000))]);
    assert.ok(ended, 'keeper B closed the stream and the soul stopped within 5 s');
    assert.match(ended.stderr, /an operator revoked/);
    assert.equal(b!.keeper.hub.sessions.isConnected(sid), false);
    assert.equal((await soulStatus(a, sid)).status, 'revoked');

    const bMetrics = `http://${b!.config.listen.metrics.addr}`;
    const before = await handshakes(bMetrics, 'revoked');
    const again = soulRun(sid, config);
    running.push(again);
    await waitFor(
      'keeper B to refuse the revoked certificate',
      async () => (await handshakes(bMetrics, 'revoked')) > before,
      20_000,
    );
    await again.kill();
    assert.equal((await soulStatus(a, sid)).status, 'revoked');
  });
});
