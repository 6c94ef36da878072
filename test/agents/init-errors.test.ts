// Every `soul init` error row of interface spec 7, with the exact message and fix the host sees.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { issueBootstrapToken } from '../../db/repos/bootstrap-tokens';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import {
  endpointOf,
  foreignCa,
  port,
  register,
  soulInit,
  uniqueSid,
  writeSoulConfig,
  type EndpointSpec,
} from './harness';

const TOKEN_REFUSED = (sid: string) =>
  'soul: bootstrap token invalid, expired or used\n' +
  `  fix: reissue the token (POST /v1/souls/${sid}/issue-token, with force while an unused one is active) and run soul init with the new token\n`;
const TLS_FIX =
  "  fix: keeper.tls.ca must be the CA of the keeper's PKI root, and the endpoint host must be in the server certificate's SAN\n";

async function metric(k: TestKeeper, line: RegExp): Promise<number> {
  const text = await (await fetch(`${k.metricsUrl}/metrics`)).text();
  const m = text.split('\n').find((l) => line.test(l));
  return m ? Number(m.slice(m.lastIndexOf(' ') + 1)) : 0;
}

describe('soul init: errors and fixes', function () {
  this.timeout(120_000);
  let k: TestKeeper;
  let dir: string;

  before(async () => {
    k = await startTestKeeper();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'soul-init-'));
  });
  after(async () => {
    await k?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function soul(name: string, endpoints?: EndpointSpec[], ca?: string | null) {
    const sid = uniqueSid(name);
    const token = await register(k, sid);
    const d = path.join(dir, sid);
    return {
      sid,
      token,
      seed: path.join(d, 'seed'),
      config: writeSoulConfig(d, sid, endpoints ?? [endpointOf(k)], ca),
    };
  }

  it('token reused: refused with the one token message', async () => {
    const s = await soul('reuse');
    assert.equal((await soulInit(s.sid, s.config, s.token)).code, 0);
    fs.rmSync(s.seed, { recursive: true });
    const r = await soulInit(s.sid, s.config, s.token);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, TOKEN_REFUSED(s.sid));
    assert.ok(!fs.existsSync(path.join(s.seed, 'key.pem')), 'no key is left behind');
  });

  it('token expired (issued in the past by a controlled clock): same message; the keeper counts it as expired', async () => {
    const s = await soul('expired');
    const before = await metric(k, /^keeper_handshakes_total\{listener="bootstrap",outcome="token_expired"/);
    const { token } = await issueBootstrapToken(k.keeper.runtime.db, s.sid, {
      force: true,
      ttlMs: 60_000,
      now: new Date(Date.now() - 3_600_000),
    });
    const r = await soulInit(s.sid, s.config, token);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, TOKEN_REFUSED(s.sid));
    assert.equal(await metric(k, /^keeper_handshakes_total\{listener="bootstrap",outcome="token_expired"/), before + 1);
  });

  it('token issued for another SID: refused, and not spent (its own host still onboards with it)', async () => {
    const a = await soul('wrong-a');
    const b = await soul('wrong-b');
    const r = await soulInit(a.sid, a.config, b.token);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, TOKEN_REFUSED(a.sid));
    assert.equal((await soulInit(b.sid, b.config, b.token)).code, 0);
  });

  it('short hostname: refused before anything is sent', async () => {
    const s = await soul('short');
    const r = await soulInit('shorthost', s.config, s.token);
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      'soul: the host name "shorthost" is not a fully-qualified domain name\n' +
        "  fix: give the host its FQDN under the PKI's allowed domain (set the hostname, or its canonical name in /etc/hosts): the SID is the host's FQDN\n",
    );
  });

  it('host FQDN differs from the configured sid: refused (exit 2)', async () => {
    const s = await soul('mismatch');
    const other = uniqueSid('elsewhere');
    const r = await soulInit(other, s.config, s.token);
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      new RegExp(
        `^soul: the host's FQDN "${other.replace(/\./g, '\\.')}" does not equal sid "${s.sid.replace(/\./g, '\\.')}" in `,
      ),
    );
  });

  it('CA from another root: unknown authority, and the token is never presented (it still works afterwards)', async () => {
    const s = await soul('foreign', undefined, await foreignCa(dir));
    const r = await soulInit(s.sid, s.config, s.token);
    assert.equal(r.code, 1);
    const where = `localhost:${port(k.config.listen.grpc.bootstrap.addr)}`;
    assert.match(
      r.stderr,
      new RegExp(
        `^soul: certificate validation failed: unknown authority: keeper.tls.ca does not validate the certificate of the keeper at ${where} \\([A-Z_]+\\)\\n`,
      ),
    );
    assert.ok(r.stderr.endsWith(TLS_FIX));
    const fixed = writeSoulConfig(path.join(dir, s.sid), s.sid, [endpointOf(k)]);
    assert.equal((await soulInit(s.sid, fixed, s.token)).code, 0);
  });

  it('server name not in the SAN (endpoint 127.0.0.2): certificate validation failed', async () => {
    // 127.0.0.2 reaches the keeper through a plain TCP relay; the keeper's certificate does not name it.
    const relay = net.createServer((c) => {
      const up = net.connect(port(k.config.listen.grpc.bootstrap.addr), '127.0.0.1');
      c.pipe(up).pipe(c);
      c.on('error', () => up.destroy());
      up.on('error', () => c.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.2', resolve));
    try {
      const relayPort = (relay.address() as net.AddressInfo).port;
      const s = await soul('san', [{ ...endpointOf(k), host: '127.0.0.2', bootstrap_port: relayPort }]);
      const r = await soulInit(s.sid, s.config, s.token);
      assert.equal(r.code, 1);
      assert.match(
        r.stderr,
        new RegExp(
          `^soul: certificate validation failed: the keeper's certificate at 127\\.0\\.0\\.2:${relayPort} does not name "127\\.0\\.0\\.2" in its SAN`,
        ),
      );
      assert.ok(r.stderr.endsWith(TLS_FIX));
    } finally {
      relay.close();
    }
  });

  it('identity already present: refused, the identity is untouched', async () => {
    const s = await soul('twice');
    assert.equal((await soulInit(s.sid, s.config, s.token)).code, 0);
    const cert = fs.readFileSync(path.join(s.seed, 'cert.pem'), 'utf8');
    const { token } = await issueBootstrapToken(k.keeper.runtime.db, s.sid, { force: true, ttlMs: 60_000 });
    const r = await soulInit(s.sid, s.config, token);
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      `soul: an identity already exists under ${s.seed}\n` +
        `  fix: this host is already onboarded: start it with soul run. Remove ${s.seed} only if you mean to re-enroll (and reissue a token)\n`,
    );
    assert.equal(fs.readFileSync(path.join(s.seed, 'cert.pem'), 'utf8'), cert);
  });

  it('empty keeper.tls.ca: refused (exit 2), nothing is contacted', async () => {
    const s = await soul('noca', undefined, null);
    const r = await soulInit(s.sid, s.config, s.token);
    assert.equal(r.code, 2);
    assert.equal(
      r.stderr,
      `soul: keeper.tls.ca is empty: no CA file is configured in ${s.config}\n` +
        "  fix: pre-load the CA certificate of the keeper's PKI root on this host and set keeper.tls.ca to its path (no trust on first use)\n",
    );
  });

  it('no token at all: refused with where to put one (exit 2)', async () => {
    const s = await soul('notoken');
    const r = await soulInit(s.sid, s.config, undefined);
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /^soul: no bootstrap token\n  fix: pass --token=<token>, set SOUL_BOOTSTRAP_TOKEN, or pipe the token on stdin/,
    );
  });
});

describe('bootstrap listener: failed attempts are limited per token', function () {
  this.timeout(60_000);
  let k: TestKeeper;
  let dir: string;
  before(async () => {
    k = await startTestKeeper({
      mutate: (doc) => {
        doc.auth.bootstrap_rate_limit = { failures: 2, window: '1m' };
      },
    });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'soul-rate-'));
  });
  after(async () => {
    await k?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a token after two failures and says when to retry; a good token from the same source still onboards', async () => {
    const sid = uniqueSid('limited');
    const token = await register(k, sid);
    const config = writeSoulConfig(path.join(dir, sid), sid, [endpointOf(k)]);
    const bad = 'kbt_' + 'A'.repeat(43);
    assert.equal((await soulInit(sid, config, bad)).stderr, TOKEN_REFUSED(sid));
    assert.equal((await soulInit(sid, config, bad)).stderr, TOKEN_REFUSED(sid));
    const r = await soulInit(sid, config, bad);
    assert.equal(r.code, 1);
    const m =
      /^soul: too many failed bootstrap attempts with this token; retry in (\d+)s\n  fix: wait for the window/.exec(
        r.stderr,
      );
    assert.ok(m, r.stderr);
    assert.ok(Number(m[1]) > 30 && Number(m[1]) <= 60);
    const good = await soulInit(sid, config, token);
    assert.equal(good.code, 0, good.stderr);
  });
});
