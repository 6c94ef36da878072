// Re-onboarding closes the streams of the soul's earlier certificates before the new identity is
// served, on whichever keeper holds them (issue 28 item 5). Two keepers on one database and cache:
// the old identity's stream is held by keeper A (a copy of the old key, answering nothing, so a
// step is in flight on it); the host onboards again through keeper B's bootstrap listener and its
// new `soul run` connects to B. The old stream is told goodbye{superseded} and closed, its step in
// flight ends interrupted (a run records it `unknown`), and that happens before B opens the new
// identity's session; the old certificate is refused afterwards.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { silentLogger } from '../../common/logger';
import { loadConfig } from '../../platform/config/load';
import { startKeeper, type RunningKeeper } from '../../keeper/server';
import { StepInterrupted } from '../../hub/dispatch-errors';
import { prepareKeeperConfig, startTestKeeper, type TestKeeper } from '../support/keeper';
import {
  api,
  endpointOf,
  register,
  soulInit,
  soulRun,
  soulStatus,
  uniqueSid,
  waitForStatus,
  writeSoulConfig,
  type RunningSoul,
} from './harness';
import { openStream, readSeed, soulprintFor } from './raw-client';

describe("re-onboarding closes the old certificate's stream on another keeper first (real keepers, real soul)", function () {
  this.timeout(120_000);
  let a: TestKeeper;
  let b: { keeper: RunningKeeper; config: ReturnType<typeof loadConfig>; dir: string } | undefined;
  let dir: string;
  const running: RunningSoul[] = [];

  before(async () => {
    a = await startTestKeeper({ kid: `oa-${randomBytes(2).toString('hex')}` });
    const files = await prepareKeeperConfig({
      kid: `ob-${randomBytes(2).toString('hex')}`,
      db: a.db,
      secretName: a.secretName,
    });
    const config = loadConfig(files.configFile);
    b = { keeper: await startKeeper(config, silentLogger), config, dir: files.dir };
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'souls-reonboard-'));
  });
  after(async () => {
    await Promise.all(running.map((s) => s.kill()));
    await b?.keeper.stop();
    if (b) fs.rmSync(b.dir, { recursive: true, force: true });
    await a?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the old stream on keeper A is closed, its step in flight interrupted, before keeper B serves the new identity', async () => {
    const sid = uniqueSid('reonboard');
    const oldConfig = writeSoulConfig(path.join(dir, 'old'), sid, [endpointOf(a)]);
    assert.equal((await soulInit(sid, oldConfig, await register(a, sid))).code, 0);
    const old = openStream(a.config.listen.grpc.event_stream.addr, readSeed(path.join(dir, 'old', 'seed')));
    old.send({ hello: { soulprint: soulprintFor(sid), soul_version: 'test' } });
    await old.next('welcome');
    await waitForStatus(a, sid, 'connected');
    assert.ok(a.keeper.hub.sessions.isConnected(sid), "keeper A holds the old identity's stream");

    // A step in flight on the old stream (it is never answered there).
    const inFlight = a.keeper.hub.sessions.sendStep(
      sid,
      { applyId: 'reonboard-apply', stepIndex: 0, module: 'core.file.present', params: {} },
      { timeoutMs: 60_000 },
    );
    const outcome = inFlight.then(
      () => 'answered',
      (err: unknown) => err,
    );
    await old.next('step_request');

    // Whether A still held the old stream at the moment B opened a session for the SID.
    const openedWhileOldLive: boolean[] = [];
    const sessionsB = b!.keeper.hub.sessions;
    const open = sessionsB.open.bind(sessionsB);
    sessionsB.open = (...args: Parameters<typeof open>) => {
      if (args[0] === sid) openedWhileOldLive.push(a.keeper.hub.sessions.isConnected(sid));
      return open(...args);
    };

    const forced = await api(a, 'POST', `/v1/souls/${sid}/issue-token`, { force: true });
    assert.equal(forced.status, 201, JSON.stringify(forced.body));
    const bEndpoint = {
      host: 'localhost',
      priority: 10,
      bootstrap_port: Number(b!.config.listen.grpc.bootstrap.addr.split(':')[1]),
      event_stream_port: Number(b!.config.listen.grpc.event_stream.addr.split(':')[1]),
    };
    const newConfig = writeSoulConfig(path.join(dir, 'new'), sid, [bEndpoint]);
    const init = await soulInit(sid, newConfig, forced.body.bootstrap_token);
    assert.equal(init.code, 0, init.stderr);
    const soul = soulRun(sid, newConfig);
    running.push(soul);

    const err = await outcome;
    assert.ok(
      err instanceof StepInterrupted,
      `the step in flight on the old stream is interrupted (outcome unknown), got ${String(err)}`,
    );
    assert.ok((await old.ended) !== undefined);
    assert.ok(
      old.received.some((m) => m.msg === 'goodbye' && m.goodbye.reason === 'superseded'),
      'the old stream was told it was superseded',
    );
    const rec = await waitForStatus(a, sid, 'connected', 20_000, soul);
    assert.equal(rec.soul.connected_kid, b!.config.kid, 'the new identity is served by keeper B');
    assert.ok(
      openedWhileOldLive.length >= 1 && openedWhileOldLive.every((live) => !live),
      `keeper A had closed the old stream before B opened the new identity's session (${JSON.stringify(openedWhileOldLive)})`,
    );
    assert.equal(a.keeper.hub.sessions.isConnected(sid), false);
    assert.equal(
      old.received.filter((m) => m.msg === 'step_request').length,
      1,
      'the old stream was sent nothing after the re-onboarding',
    );

    // The new identity is served: a step goes out on B's stream and is answered by the soul.
    const answer = await sessionsB.sendStep(
      sid,
      { applyId: 'reonboard-apply-2', stepIndex: 0, module: 'no.such.module', params: {} },
      { timeoutMs: 20_000 },
    );
    assert.match(answer.output, /unknown state module/);

    // The old certificate is refused from now on, on either keeper.
    const again = openStream(a.config.listen.grpc.event_stream.addr, readSeed(path.join(dir, 'old', 'seed')));
    again.send({ hello: { soulprint: soulprintFor(sid), soul_version: 'test' } });
    const refused = await again.ended;
    assert.match(refused?.details ?? '', /replaced by a newer one/);
    assert.equal((await soulStatus(a, sid)).connected_kid, b!.config.kid);
  });
});
