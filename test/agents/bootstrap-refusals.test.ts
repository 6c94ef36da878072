// Onboarding when the PKI is configured wrong, and the bootstrap failure limits. A PKI role that
// honours the CSR's names hands back a certificate for another SID: the keeper refuses it, logs a
// PKI misconfiguration, the soul hears a clear refusal (not "retry later") and the token stays
// valid for when the role is fixed. A CSR the PKI refuses: the same. Failures are limited per token,
// and per address only for tokens the keeper never issued: a host behind the same address as a
// failing one (or as a flood of made-up tokens) still onboards.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { createCsr, generateKey } from '../../agent/csr';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { deleteRole, keeperToken, putRole, roleName, soulRoleParams, useToken } from '../support/pki';
import {
  endpointOf,
  register,
  soulInit,
  soulRun,
  uniqueSid,
  waitForStatus,
  writeSoulConfig,
  type RunningSoul,
} from './harness';
import { enroll } from './raw-client';

describe('onboarding against a misconfigured PKI, and bootstrap failure limits (real keeper, real PKI)', function () {
  this.timeout(120_000);
  let k: TestKeeper;
  let dir: string;
  let role: string;
  const running: RunningSoul[] = [];
  const bootstrapAddr = () => k.config.listen.grpc.bootstrap.addr;
  const handshakes = async (outcome: string) => {
    const text = await (await fetch(`${k.metricsUrl}/metrics`)).text();
    const line = text
      .split('\n')
      .find((l) => l.startsWith(`keeper_handshakes_total{listener="bootstrap",outcome="${outcome}"`));
    return line ? Number(line.split(' ').pop()) : 0;
  };
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => assert.fail('expected a refusal'),
      (err: grpc.ServiceError) => err,
    );

  before(async () => {
    role = roleName('soul-honour');
    // The mistake: names from the CSR.
    await putRole(role, soulRoleParams({ use_csr_common_name: true, use_csr_sans: true }));
    const token = await keeperToken();
    k = await startTestKeeper({
      mutate: (doc) => {
        useToken(doc, token, role);
        doc.auth.bootstrap_rate_limit = { failures: 3, address_failures: 5, window: '1m' };
      },
    });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'souls-pki-'));
  });
  after(async () => {
    await Promise.all(running.map((r) => r.kill()));
    await k?.stop();
    await deleteRole(role);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a certificate for another name is refused and logged as a PKI misconfiguration; the token survives it', async () => {
    const sid = uniqueSid('victim');
    const other = uniqueSid('other');
    const token = await register(k, sid);
    const before = await handshakes('pki_misconfigured');
    const key = generateKey();
    const err = await refusal(enroll(bootstrapAddr(), { token, sid, csr_pem: createCsr(key, other, [other]) }));
    assert.equal(err.code, grpc.status.FAILED_PRECONDITION);
    assert.match(
      err.details,
      /issued a certificate that does not fit this soul, so the keeper did not hand it out; an operator must fix the PKI role/,
    );
    assert.equal(await handshakes('pki_misconfigured'), before + 1);

    // Another mistake, met by a real soul: a role that also makes server certificates. Refused
    // again, and the soul says so plainly.
    await putRole(role, soulRoleParams({ server_flag: true }));
    const config = writeSoulConfig(path.join(dir, sid), sid, [endpointOf(k)]);
    const init = await soulInit(sid, config, token);
    assert.equal(init.code, 1);
    assert.match(
      init.stderr,
      /soul: the keeper refused to issue a certificate: the keeper's PKI issued a certificate that does not fit this soul/,
    );
    assert.match(init.stderr, /fix: nothing to change on this host: the token stays valid/);
    assert.doesNotMatch(init.stderr, /retry later/);
    assert.equal(fs.existsSync(path.join(dir, sid, 'seed', 'cert.pem')), false);

    // The operator fixes the role; the same token onboards the host.
    await putRole(role, soulRoleParams());
    const again = await soulInit(sid, config, token);
    assert.equal(again.code, 0, again.stderr);
  });

  it('a CSR the PKI refuses gets a clear refusal, not "retry later"; the token stays valid', async () => {
    const sid = uniqueSid('refused');
    const token = await register(k, sid);
    // The soul's key is EC; a role for RSA keys refuses its CSR (HTTP 400 from the store).
    await putRole(role, soulRoleParams({ key_type: 'rsa', key_bits: 2048 }));
    const before = await handshakes('pki_refused');
    const config = writeSoulConfig(path.join(dir, sid), sid, [endpointOf(k)]);
    const init = await soulInit(sid, config, token);
    assert.equal(init.code, 1);
    assert.match(
      init.stderr,
      /soul: the keeper refused to issue a certificate: the keeper's PKI refused the certificate request; retrying will not help/,
    );
    assert.doesNotMatch(init.stderr, /cannot enroll now|retry later/);
    assert.equal(await handshakes('pki_refused'), before + 1);
    await putRole(role, soulRoleParams());
    assert.equal((await soulInit(sid, config, token)).code, 0);
  });

  it('failures are limited per token, and per address only for unknown tokens: a host behind the same address still onboards', async () => {
    // A failing host retries a token that was already used: after 3 failures that token waits.
    const sid = uniqueSid('failing');
    const used = await register(k, sid);
    const cfg = writeSoulConfig(path.join(dir, sid), sid, [endpointOf(k)]);
    assert.equal((await soulInit(sid, cfg, used)).code, 0);
    const csr = createCsr(generateKey(), sid);
    for (let i = 0; i < 3; i++) {
      assert.equal(
        (await refusal(enroll(bootstrapAddr(), { token: used, sid, csr_pem: csr }))).code,
        grpc.status.UNAUTHENTICATED,
      );
    }
    const limited = await refusal(enroll(bootstrapAddr(), { token: used, sid, csr_pem: csr }));
    assert.equal(limited.code, grpc.status.RESOURCE_EXHAUSTED);
    assert.match(limited.details, /too many failed bootstrap attempts with this token; retry in \d+s/);

    // Made-up tokens from the same address: after 5 the address waits, for unknown tokens.
    for (let i = 0; i < 5; i++) {
      const e = await refusal(
        enroll(bootstrapAddr(), { token: randomBytes(32).toString('base64url'), sid, csr_pem: csr }),
      );
      assert.equal(e.code, grpc.status.UNAUTHENTICATED);
    }
    const flood = await refusal(
      enroll(bootstrapAddr(), { token: randomBytes(32).toString('base64url'), sid, csr_pem: csr }),
    );
    assert.equal(flood.code, grpc.status.RESOURCE_EXHAUSTED);
    assert.match(flood.details, /too many failed bootstrap attempts with unknown tokens from 127\.0\.0\.1/);

    // A new host behind the same address, with its own token, onboards and connects.
    const good = uniqueSid('neighbour');
    const config = writeSoulConfig(path.join(dir, good), good, [endpointOf(k)]);
    const init = await soulInit(good, config, await register(k, good));
    assert.equal(init.code, 0, init.stderr);
    const run = soulRun(good, config);
    running.push(run);
    await waitForStatus(k, good, 'connected', 20_000, run);
  });
});
