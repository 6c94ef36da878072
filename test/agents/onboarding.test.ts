// `soul init` and `soul run` as an operator would see them: several souls on one machine, each
// with its own hostname (UTS namespace), onboarded and connected to a real keeper; the registry
// status follows the stream (pending -> connected -> disconnected -> connected).
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import {
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

describe('souls: onboarding, connection and status (UTS namespaces)', function () {
  this.timeout(120_000);
  let k: TestKeeper;
  let dir: string;
  const running: RunningSoul[] = [];

  before(async () => {
    k = await startTestKeeper();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'souls-'));
  });
  after(async () => {
    await Promise.all(running.map((s) => s.kill()));
    await k?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('onboards three souls (token by flag, environment and stdin); each connects, drops to disconnected when killed, reconnects on restart', async () => {
    const souls = await Promise.all(
      ['alpha', 'beta', 'gamma'].map(async (name) => {
        const sid = uniqueSid(name);
        const token = await register(k, sid);
        return { sid, token, config: writeSoulConfig(path.join(dir, sid), sid, [endpointOf(k)]) };
      }),
    );
    const [a, b, c] = souls as [(typeof souls)[0], (typeof souls)[0], (typeof souls)[0]];
    const inits = await Promise.all([
      soulInit(a.sid, a.config, a.token),
      soulInit(b.sid, b.config, undefined, { env: { SOUL_BOOTSTRAP_TOKEN: b.token } }),
      soulInit(c.sid, c.config, undefined, { stdin: `${c.token}\n` }),
    ]);
    for (const [i, r] of inits.entries()) {
      const s = souls[i]!;
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stdout,
        new RegExp(`^onboarded ${s.sid.replace(/\./g, '\\.')} through localhost:\\d+: certificate `),
      );
      for (const out of [r.stdout, r.stderr]) assert.ok(!out.includes(s.token), 'the token is never printed');
      const seed = path.join(dir, s.sid, 'seed');
      assert.equal(fs.statSync(path.join(seed, 'key.pem')).mode & 0o777, 0o600);
      const cert = new X509Certificate(fs.readFileSync(path.join(seed, 'cert.pem')));
      assert.equal(cert.subjectAltName, `DNS:${s.sid}`);
      // Onboarding spends the token; the status waits for the stream (interface spec 3.1).
      const rec = await soulStatus(k, s.sid);
      assert.equal(rec.status, 'pending');
      assert.notEqual(rec.onboarded_at, null);
    }

    const first = souls.map((s) => soulRun(s.sid, s.config));
    running.push(...first);
    for (const s of souls) {
      const { soul } = await waitForStatus(k, s.sid, 'connected');
      assert.equal(soul.connected_kid, k.config.kid);
      assert.notEqual(soul.last_seen_at, null);
      // What the operator sees: GET /v1/souls/{sid} carries the last soulprint.
      assert.equal(soul.soulprint?.fqdn, s.sid);
      assert.equal(soul.soulprint?.hostname, s.sid);
      assert.equal(soul.soulprint?.cpu_count, os.availableParallelism());
    }

    // Kill one: the others stay connected, the killed one is disconnected within a few seconds.
    await first[1]!.kill('SIGKILL');
    const down = await waitForStatus(k, b.sid, 'disconnected', 5000);
    assert.ok(down.ms < 5000);
    assert.equal((await soulStatus(k, a.sid)).status, 'connected');
    assert.equal((await soulStatus(k, c.sid)).status, 'connected');

    const again = soulRun(b.sid, b.config);
    running.push(again);
    await waitForStatus(k, b.sid, 'connected');
  });

  it('a silent soul (stopped, no heartbeats) is disconnected after the lease TTL and reconnects when it wakes', async () => {
    const sid = uniqueSid('sleepy');
    const config = writeSoulConfig(path.join(dir, sid), sid, [endpointOf(k)]);
    assert.equal((await soulInit(sid, config, await register(k, sid))).code, 0);
    const soul = soulRun(sid, config);
    running.push(soul);
    await waitForStatus(k, sid, 'connected');
    soul.child.kill('SIGSTOP');
    // lease_ttl is 3s in the test config; the ticker runs every second.
    const down = await waitForStatus(k, sid, 'disconnected', 8000);
    assert.ok(down.ms >= 2000, `not before the TTL (took ${down.ms} ms)`);
    soul.child.kill('SIGCONT');
    await waitForStatus(k, sid, 'connected', 15_000);
  });

  it('a second stream with the same identity wins; the first soul is told "superseded" and exits', async () => {
    const sid = uniqueSid('twin');
    const config = writeSoulConfig(path.join(dir, sid), sid, [endpointOf(k)]);
    assert.equal((await soulInit(sid, config, await register(k, sid))).code, 0);
    const first = soulRun(sid, config);
    running.push(first);
    await waitForStatus(k, sid, 'connected');
    const epoch1 = (await k.keeper.hub.presence.get(sid))!.epoch;

    // A copy of the identity elsewhere (its own ledger directory, so the ledger lock does not stop it).
    const twinDir = path.join(dir, `${sid}-twin`);
    const twinConfig = writeSoulConfig(twinDir, sid, [endpointOf(k)]);
    fs.mkdirSync(path.join(twinDir, 'seed'), { recursive: true });
    for (const f of ['key.pem', 'cert.pem', 'chain.pem'])
      fs.copyFileSync(path.join(dir, sid, 'seed', f), path.join(twinDir, 'seed', f));
    const second = soulRun(sid, twinConfig);
    running.push(second);

    const end = await first.done;
    assert.equal(end.code, 1);
    assert.match(
      end.stderr,
      new RegExp(
        `soul: another stream for ${sid.replace(/\./g, '\\.')} superseded this one \\(goodbye: superseded\\)\\n  fix: run one soul per identity`,
      ),
    );
    const lease = await k.keeper.hub.presence.get(sid);
    assert.ok(lease && lease.epoch > epoch1);
    assert.equal((await soulStatus(k, sid)).status, 'connected');
  });
});
