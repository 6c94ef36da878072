// Identity is proven, not asserted (interface spec 1.4; ARCHITECTURE 4): the certificate names the
// soul; nothing a soul sends can make it another soul, or touch another soul's session.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { createCsr, generateKey } from '../../agent/csr';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import {
  endpointOf,
  openssl,
  register,
  soulInit,
  soulStatus,
  uniqueSid,
  waitForStatus,
  writeSoulConfig,
} from './harness';
import { enroll, openStream, readSeed, soulprintFor } from './raw-client';

describe('souls: identity isolation', function () {
  this.timeout(120_000);
  let k: TestKeeper;
  let dir: string;
  let streamAddr: string;

  before(async () => {
    k = await startTestKeeper();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'souls-iso-'));
    streamAddr = k.config.listen.grpc.event_stream.addr;
  });
  after(async () => {
    await k?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function onboarded(name: string): Promise<{ sid: string; seed: string }> {
    const sid = uniqueSid(name);
    const config = writeSoulConfig(path.join(dir, sid), sid, [endpointOf(k)]);
    const r = await soulInit(sid, config, await register(k, sid));
    assert.equal(r.code, 0, r.stderr);
    return { sid, seed: path.join(dir, sid, 'seed') };
  }

  it("soul A's certificate cannot open soul B's session or answer B's step requests", async () => {
    const a = await onboarded('iso-a');
    const b = await onboarded('iso-b');

    const bStream = openStream(streamAddr, readSeed(b.seed));
    bStream.send({ hello: { soulprint: soulprintFor(b.sid), soul_version: 'test' } });
    const welcome = await bStream.next('welcome');
    await waitForStatus(k, b.sid, 'connected');

    // A claims to be B in its Hello: refused; B's session, lease and record are untouched.
    const forged = openStream(streamAddr, readSeed(a.seed));
    forged.send({ hello: { soulprint: soulprintFor(b.sid), soul_version: 'test' } });
    const err = await forged.ended;
    assert.equal(err?.code, grpc.status.PERMISSION_DENIED);
    assert.equal(err?.details, `the soulprint names host "${b.sid}" but the certificate is for ${a.sid}`);
    assert.equal((await k.keeper.hub.presence.get(b.sid))?.epoch, (welcome as any).welcome.epoch);
    assert.equal((await soulStatus(k, a.sid)).status, 'pending');
    assert.ok(k.keeper.hub.sessions.isConnected(b.sid));

    // A connected as itself sends a result for B's in-flight request: it does not resolve B's step.
    const aStream = openStream(streamAddr, readSeed(a.seed));
    aStream.send({ hello: { soulprint: soulprintFor(a.sid), soul_version: 'test' } });
    await aStream.next('welcome');
    const pending = k.keeper.hub.sessions.sendStep(
      b.sid,
      { applyId: 'iso-apply', stepIndex: 0, module: 'core.file.present', params: {} },
      { timeoutMs: 10_000 },
    );
    const req = (await bStream.next('step_request')) as any;
    const result = {
      request_id: req.step_request.request_id,
      apply_id: 'iso-apply',
      step_index: 0,
      started_at_ms: 1,
      finished_at_ms: 2,
      replayed: false,
      diff_json: '',
      files: [],
    };
    aStream.send({ step_result: { ...result, changed: true, ok: true, output: 'forged by A' } });
    await new Promise((r) => setTimeout(r, 300));
    bStream.send({ step_result: { ...result, changed: false, ok: false, output: 'from B' } });
    const answer = await pending;
    assert.equal(answer.output, 'from B');
    aStream.close();
    bStream.close();
  });

  it('a CSR asking for extra names gets a certificate naming only the SID, for client authentication only', async () => {
    const sid = uniqueSid('greedy');
    const token = await register(k, sid);
    const csr = createCsr(generateKey(), 'keeper.keeper.test', [
      sid,
      'keeper.keeper.test',
      'other.keeper.test',
      'localhost',
    ]);
    const res = await enroll(k.config.listen.grpc.bootstrap.addr, { token, sid, csr_pem: csr });
    const cert = new X509Certificate(res.certificate_pem);
    assert.equal(cert.subjectAltName, `DNS:${sid}`);
    assert.match(cert.subject, new RegExp(`CN=${sid.replace(/\./g, '\\.')}`));
    assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.2']);
    assert.equal(res.sid, sid);
  });

  it('a client certificate from another root cannot open a stream', async () => {
    const key = path.join(dir, 'rogue.key');
    const crt = path.join(dir, 'rogue.crt');
    const sid = uniqueSid('rogue');
    await openssl([
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-subj',
      `/CN=${sid}`,
      '-addext',
      `subjectAltName=DNS:${sid}`,
      '-addext',
      'extendedKeyUsage=clientAuth',
      '-days',
      '1',
      '-keyout',
      key,
      '-out',
      crt,
    ]);
    const s = openStream(streamAddr, { key: fs.readFileSync(key), cert: fs.readFileSync(crt) });
    s.send({ hello: { soulprint: soulprintFor(sid), soul_version: 'test' } });
    const err = await s.ended;
    assert.ok(err, 'the stream fails');
    assert.equal(s.received.length, 0);
    assert.equal(k.keeper.hub.sessions.isConnected(sid), false);
  });
});
