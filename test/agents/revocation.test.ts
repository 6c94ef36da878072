// Identity that can be withdrawn, with real souls on a real keeper: one live certificate per soul
// (an older certificate of a re-onboarded soul is refused, and cannot take over the live stream),
// re-onboarding an onboarded soul only with force, and revocation: the stream closed at once, the
// soul told why and stopped, its certificate refused from then on, the registry saying revoked.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
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

describe('soul identity: one live certificate, revocation (real souls, real keeper)', function () {
  this.timeout(120_000);
  let k: TestKeeper;
  let dir: string;
  const running: RunningSoul[] = [];
  const sid = uniqueSid('revoke');
  let config: string;
  let oldConfig: string;

  const handshakes = async (outcome: string) => {
    const text = await (await fetch(`${k.metricsUrl}/metrics`)).text();
    const line = text
      .split('\n')
      .find((l) => l.startsWith(`keeper_handshakes_total{listener="event_stream",outcome="${outcome}"`));
    return line ? Number(line.split(' ').pop()) : 0;
  };

  before(async () => {
    k = await startTestKeeper();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'souls-revoke-'));
  });
  after(async () => {
    await Promise.all(running.map((r) => r.kill()));
    await k?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('re-onboarding needs force; afterwards the old certificate is refused and the live stream stays', async () => {
    const token = await register(k, sid);
    config = writeSoulConfig(path.join(dir, sid), sid, [endpointOf(k)]);
    assert.equal((await soulInit(sid, config, token)).code, 0);
    // Keep the first identity, as an attacker with a copy of the old key would.
    const oldDir = path.join(dir, `${sid}-old`);
    fs.cpSync(path.join(dir, sid, 'seed'), path.join(oldDir, 'seed'), { recursive: true });
    const doc = yaml.load(fs.readFileSync(config, 'utf8')) as { paths: Record<string, string> };
    oldConfig = path.join(oldDir, 'soul.yml');
    fs.writeFileSync(
      oldConfig,
      yaml.dump({ ...doc, paths: { modules: path.join(oldDir, 'modules'), seed: path.join(oldDir, 'seed') } }),
    );

    const plain = await api(k, 'POST', `/v1/souls/${sid}/issue-token`);
    assert.equal(plain.status, 409);
    assert.match(plain.body.detail, /already onboarded; issue a token with force/);
    const forced = await api(k, 'POST', `/v1/souls/${sid}/issue-token`, { force: true });
    assert.equal(forced.status, 201);
    fs.rmSync(path.join(dir, sid, 'seed'), { recursive: true, force: true });
    assert.equal((await soulInit(sid, config, forced.body.bootstrap_token)).code, 0);
    const current = soulRun(sid, config);
    running.push(current);
    await waitForStatus(k, sid, 'connected', 20_000, current);
    const epoch = (await soulStatus(k, sid)).connected_kid;

    const before = await handshakes('old_certificate');
    const old = soulRun(sid, oldConfig);
    running.push(old);
    await waitFor(
      'the old certificate to be refused',
      async () => (await handshakes('old_certificate')) > before,
      20_000,
    );
    assert.equal(current.child.exitCode, null, 'the current soul was not superseded');
    const now = await soulStatus(k, sid);
    assert.equal(now.status, 'connected');
    assert.equal(now.connected_kid, epoch);
    await old.kill();
  });

  it('revoke closes the stream at once, stops the soul with the reason, refuses the certificate and shows revoked', async () => {
    const current = running[0]!;
    const r = await api(k, 'POST', `/v1/souls/${sid}/revoke`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.status, 'revoked');
    assert.ok(r.body.revoked_at);
    const ended = await Promise.race([current.done, new Promise<null>((res) => setTimeout(() => res(null), 5000))]);
    assert.ok(ended, 'the soul process ended within 5 s');
    assert.notEqual(ended.code, 0);
    assert.match(ended.stderr, /an operator revoked/);
    assert.equal((await soulStatus(k, sid)).status, 'revoked');

    const before = await handshakes('revoked');
    const again = soulRun(sid, config);
    running.push(again);
    await waitFor('the revoked certificate to be refused', async () => (await handshakes('revoked')) > before, 20_000);
    assert.equal((await soulStatus(k, sid)).status, 'revoked', 'a refused soul does not change the registry');
    await again.kill();

    const plain = await api(k, 'POST', `/v1/souls/${sid}/issue-token`);
    assert.equal(plain.status, 409);
    assert.match(plain.body.detail, /is revoked; issue a token with force/);
  });

  it('DELETE removes the soul: its certificate is refused as unregistered, and after registering the SID again until it is onboarded again', async () => {
    const other = uniqueSid('delete');
    const token = await register(k, other);
    const cfg = writeSoulConfig(path.join(dir, other), other, [endpointOf(k)]);
    assert.equal((await soulInit(other, cfg, token)).code, 0);
    const run = soulRun(other, cfg);
    running.push(run);
    await waitForStatus(k, other, 'connected', 20_000, run);
    const del = await fetch(`${k.baseUrl}/v1/souls/${other}`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${k.adminToken}` },
    });
    assert.equal(del.status, 204);
    assert.equal((await api(k, 'GET', `/v1/souls/${other}`)).status, 404);
    const ended = await Promise.race([run.done, new Promise<null>((res) => setTimeout(() => res(null), 5000))]);
    assert.ok(ended, "the removed soul's stream was closed and the soul stopped within 5 s");
    const before = await handshakes('not_registered');
    const again = soulRun(other, cfg);
    running.push(again);
    await waitFor(
      'the removed soul to be refused when it connects',
      async () => (await handshakes('not_registered')) > before,
      20_000,
    );
    await again.kill();
    const reRegistered = await api(k, 'POST', '/v1/souls', { sid: other, transport: 'agent', covens: ['web'] });
    assert.equal(reRegistered.status, 201);

    // Registered again, not onboarded again: the old certificate (signed by the same PKI, unexpired)
    // does not stand in for the bootstrap token.
    const refusedBefore = await handshakes('not_onboarded');
    const stale = soulRun(other, cfg);
    running.push(stale);
    await waitFor(
      'the old certificate to be refused as not onboarded',
      async () => (await handshakes('not_onboarded')) > refusedBefore,
      20_000,
    );
    assert.notEqual((await soulStatus(k, other)).status, 'connected');
    await stale.kill();
    // Onboarded with the new registration's token, the same host connects.
    fs.rmSync(path.join(dir, other, 'seed'), { recursive: true, force: true });
    assert.equal((await soulInit(other, cfg, reRegistered.body.bootstrap_token)).code, 0);
    const fresh = soulRun(other, cfg);
    running.push(fresh);
    await waitForStatus(k, other, 'connected', 20_000, fresh);
  });
});
