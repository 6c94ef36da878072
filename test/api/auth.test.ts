// Operator authentication (issue 3 item 2): every token the keeper did not issue, or no longer
// accepts, answers 401; a removed operator's token stops working; an empty registry answers 403.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { silentLogger } from '../../common/logger';
import { issueOperatorToken } from '../../api/jwt';
import { startKeeper } from '../../keeper/server';
import { cleanupKeeperFiles, startTestKeeper, type TestKeeper } from '../support/keeper';
import { putSecret } from '../support/secretstore';
import { stackEnv } from '../support/stack-env';
import { assertProblem, call, operatorToken, sleep } from './helpers';

const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');

describe('Operator API authentication', function () {
  let tk: TestKeeper;
  let key: Uint8Array;
  let issuer: string;
  const now = () => Math.floor(Date.now() / 1000);

  before(async () => {
    tk = await startTestKeeper();
    key = tk.keeper.runtime.signingKey;
    issuer = tk.config.auth.jwt.issuer;
  });
  after(async () => {
    await tk?.stop();
  });

  const get = (token: string | null) => call(tk.baseUrl, 'GET', '/v1/souls', { token });

  it('accepts the admin credential written by keeper init', async () => {
    assert.equal((await get(tk.adminToken)).status, 200);
  });

  it('answers 401 with a Bearer challenge when the token is missing or not a bearer token', async () => {
    const missing = await get(null);
    assertProblem(missing, 401, /Authorization: Bearer/);
    assert.match(missing.headers.get('www-authenticate') ?? '', /^Bearer/);
    assertProblem(
      await call(tk.baseUrl, 'GET', '/v1/souls', {
        headers: { authorization: `Basic ${Buffer.from('admin:x').toString('base64')}` },
      }),
      401,
    );
    assertProblem(await get('not-a-jwt'), 401);
    assertProblem(await get('x'.repeat(10_000)), 401);
  });

  const attacks: [string, () => Promise<string>][] = [
    [
      'alg none',
      async () =>
        `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: 'admin', role: 'cluster-admin', iss: issuer, iat: now(), exp: now() + 3600 })}.`,
    ],
    [
      'HS256 signed with another key',
      async () => (await issueOperatorToken(randomBytes(32), issuer, 'admin', 'cluster-admin', 3_600_000)).token,
    ],
    [
      'HS512 with the right key (algorithm pinned)',
      async () =>
        new SignJWT({ role: 'cluster-admin' })
          .setProtectedHeader({ alg: 'HS512' })
          .setSubject('admin')
          .setIssuer(issuer)
          .setIssuedAt()
          .setExpirationTime('1h')
          .sign(key),
    ],
    [
      'expired',
      async () =>
        (await issueOperatorToken(key, issuer, 'admin', 'cluster-admin', 60_000, new Date(Date.now() - 3_600_000)))
          .token,
    ],
    [
      'exp missing',
      async () =>
        new SignJWT({ role: 'cluster-admin' })
          .setProtectedHeader({ alg: 'HS256' })
          .setSubject('admin')
          .setIssuer(issuer)
          .setIssuedAt()
          .sign(key),
    ],
    [
      'sub missing',
      async () =>
        new SignJWT({ role: 'cluster-admin' })
          .setProtectedHeader({ alg: 'HS256' })
          .setIssuer(issuer)
          .setIssuedAt()
          .setExpirationTime('1h')
          .sign(key),
    ],
    [
      'issuer wrong',
      async () => (await issueOperatorToken(key, 'someone-else', 'admin', 'cluster-admin', 3_600_000)).token,
    ],
    [
      'payload tampered (a viewer token rewritten to admin)',
      async () => {
        const viewer = await operatorToken(tk, 'tamper-viewer', 'viewer');
        const [h, p, s] = viewer.split('.');
        const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
        return `${h}.${b64({ ...claims, sub: 'admin', role: 'cluster-admin' })}.${s}`;
      },
    ],
    ['signature stripped', async () => tk.adminToken.split('.').slice(0, 2).join('.') + '.'],
  ];
  for (const [name, forge] of attacks) {
    it(`answers 401 for a token with ${name}`, async () => {
      const a = await get(await forge());
      assertProblem(a, 401);
      assert.equal(a.body.title, 'Unauthorized');
    });
  }

  it('says an expired token has expired and how to get a fresh one', async () => {
    const expired = (
      await issueOperatorToken(key, issuer, 'admin', 'cluster-admin', 60_000, new Date(Date.now() - 3_600_000))
    ).token;
    assertProblem(await get(expired), 401, /expired/);
  });

  it("stops accepting a removed operator's token at the next request", async () => {
    const token = await operatorToken(tk, 'leaving', 'operator');
    assert.equal((await get(token)).status, 200);
    await tk.keeper.runtime.db('archons').where({ aid: 'leaving' }).delete();
    assertProblem(await get(token), 401, /no longer exists/);
  });

  it('takes the role from the registry, not from the token: a demoted operator loses permissions at once', async () => {
    const token = await operatorToken(tk, 'demoted', 'operator');
    const body = { name: 'demo-svc', git: 'https://git.example.com/x.git', ref: 'main' };
    await tk.keeper.runtime.db('archons').where({ aid: 'demoted' }).update({ role: 'viewer' });
    const a = await call(tk.baseUrl, 'POST', '/v1/services', { token, body });
    assertProblem(a, 403, /lacks the permission services:create/);
    assert.equal(a.body.missing_permission, 'services:create');
  });

  it('answers 403 to every call, with or without a token, while the operator registry is empty', async () => {
    const db = tk.keeper.runtime.db;
    const saved = await db('archons').select('*');
    await db('archons').delete();
    try {
      await sleep(1100); // the gate caches "not empty" for one second
      for (const token of [tk.adminToken, null, 'garbage']) {
        assertProblem(await get(token), 403, /registry is empty/);
        assertProblem(await call(tk.baseUrl, 'POST', '/v1/souls', { token, body: {} }), 403, /keeper init/);
      }
    } finally {
      await db('archons').insert(saved);
    }
    assert.equal((await get(tk.adminToken)).status, 200);
  });
});

describe('Operator API: changing the signing key', function () {
  it('invalidates every live token, and tokens signed with the new key work', async () => {
    const tk = await startTestKeeper();
    let keeper = tk.keeper;
    try {
      const oldAdmin = tk.adminToken;
      assert.equal((await call(tk.baseUrl, 'GET', '/v1/souls', { token: oldAdmin })).status, 200);
      await keeper.stop();
      const env = stackEnv();
      await putSecret('secret', tk.secretName, {
        dsn: tk.db.dsn,
        password: env.REDIS_PASSWORD,
        signing_key: randomBytes(32).toString('base64'),
      });
      keeper = await startKeeper(tk.config, silentLogger);
      assertProblem(await call(tk.baseUrl, 'GET', '/v1/souls', { token: oldAdmin }), 401);
      const fresh = await issueOperatorToken(
        keeper.runtime.signingKey,
        tk.config.auth.jwt.issuer,
        'admin',
        'cluster-admin',
        60_000,
      );
      assert.equal((await call(tk.baseUrl, 'GET', '/v1/souls', { token: fresh.token })).status, 200);
    } finally {
      await keeper.stop();
      await cleanupKeeperFiles(tk);
    }
  });
});
