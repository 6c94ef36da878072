// Facts a soul reports are bounded and validated at the event stream (issue 13, item 8): a 2 MiB
// soulprint, markup in the hostname or a malformed address is refused with the field and the rule,
// in Hello and in later Facts, and nothing of it is stored or served by the API.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { Soulprint } from '../../proto/types';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { endpointOf, register, soulInit, soulStatus, uniqueSid, waitForStatus, writeSoulConfig } from './harness';
import { openStream, readSeed, soulprintFor } from './raw-client';

describe('souls: soulprint limits', function () {
  this.timeout(120_000);
  let k: TestKeeper;
  let dir: string;
  let streamAddr: string;
  let sid: string;
  let seed: { key: Buffer; cert: Buffer };

  before(async () => {
    k = await startTestKeeper();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'souls-facts-'));
    streamAddr = k.config.listen.grpc.event_stream.addr;
    sid = uniqueSid('facts');
    const config = writeSoulConfig(path.join(dir, sid), sid, [endpointOf(k)]);
    const r = await soulInit(sid, config, await register(k, sid));
    assert.equal(r.code, 0, r.stderr);
    seed = readSeed(path.join(dir, sid, 'seed'));
  });
  after(async () => {
    await k?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function helloRefused(sp: Soulprint): Promise<grpc.ServiceError> {
    const s = openStream(streamAddr, seed);
    s.send({ hello: { soulprint: sp, soul_version: 'test' } });
    const err = await s.ended;
    s.close();
    assert.ok(err, 'the stream must be refused');
    return err;
  }

  it('refuses a 2 MiB soulprint in Hello; the soul stays pending with no facts stored', async () => {
    const err = await helloRefused({ ...soulprintFor(sid), os_name: 'x'.repeat(2 * 1024 * 1024) });
    assert.equal(err.code, grpc.status.INVALID_ARGUMENT);
    assert.match(err.details, /^the soulprint must be at most 16384 bytes of text/);
    const soul = await soulStatus(k, sid);
    assert.equal(soul.status, 'pending');
    assert.equal(JSON.stringify(soul).length < 4096, true, 'the API serves nothing of it');
  });

  it('names the fact and the rule for markup in the hostname, a control character and a bad address', async () => {
    const cases: [Partial<Soulprint>, RegExp][] = [
      [{ hostname: '<img src=x onerror=alert(1)>' }, /^soulprint\.hostname must be a DNS name/],
      [{ os_name: 'Debian\u001b]0;owned\u0007' }, /^soulprint\.os_name must hold printable characters only/],
      [
        { addresses: ['10.0.0.5', '10.0.0.5; DROP TABLE souls'] },
        /^soulprint\.addresses\[1\] must be an IPv4 or IPv6 address/,
      ],
    ];
    for (const [over, rule] of cases) {
      const err = await helloRefused({ ...soulprintFor(sid), ...over });
      assert.equal(err.code, grpc.status.INVALID_ARGUMENT);
      assert.match(err.details, rule);
    }
    assert.equal((await soulStatus(k, sid)).status, 'pending');
  });

  it("refuses a soulprint naming another host: the certificate's sid decides, the other host's record is untouched", async () => {
    const other = uniqueSid('facts-other');
    await register(k, other);
    const err = await helloRefused({ ...soulprintFor(sid), fqdn: other, addresses: ['192.0.2.77'] });
    assert.equal(err.code, grpc.status.PERMISSION_DENIED, err.details);
    assert.ok(err.details.includes(`names host "${other}" but the certificate is for ${sid}`), err.details);
    assert.equal((await soulStatus(k, sid)).status, 'pending');
    const theirs = await soulStatus(k, other);
    assert.equal(theirs.status, 'pending', 'the named host was not onboarded or connected by it');
    assert.equal(JSON.stringify(theirs).includes('192.0.2'), false, 'no fact of the claimant stored on the named host');
  });

  it('refuses oversized Facts on a live stream and keeps the facts it had', async () => {
    const s = openStream(streamAddr, seed);
    s.send({ hello: { soulprint: { ...soulprintFor(sid), addresses: ['192.0.2.10'] }, soul_version: 'test' } });
    await s.next('welcome');
    await waitForStatus(k, sid, 'connected');
    s.send({ facts: { soulprint: { ...soulprintFor(sid), hostname: 'h'.repeat(2 * 1024 * 1024) } } });
    const err = await s.ended;
    s.close();
    assert.equal(err?.code, grpc.status.INVALID_ARGUMENT);
    const soul = await soulStatus(k, sid);
    assert.deepEqual(soul.soulprint.addresses, ['192.0.2.10']);
    assert.equal(soul.soulprint.hostname, sid);
  });
});
