// Operator tokens at the edges (issue 13, item 8): a token issued in the future (beyond a small
// clock skew) is a 401, one inside the skew works; a 60-100 KB token is answered with a problem body.
import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import { IAT_CLOCK_SKEW_S } from '../../api/auth';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { assertProblem, call } from './helpers';

describe('Operator API: token issue time and size', function () {
  let tk: TestKeeper;
  const now = () => Math.floor(Date.now() / 1000);

  before(async () => {
    tk = await startTestKeeper();
  });
  after(async () => {
    await tk?.stop();
  });

  const token = (iat: number) =>
    new SignJWT({ role: 'cluster-admin' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('admin')
      .setIssuer(tk.config.auth.jwt.issuer)
      .setIssuedAt(iat)
      .setExpirationTime(iat + 7200)
      .sign(tk.keeper.runtime.signingKey);
  const get = (t: string) => call(tk.baseUrl, 'GET', '/v1/souls', { token: t });

  it('refuses a token whose iat lies beyond the clock skew in the future with 401 naming iat', async () => {
    for (const ahead of [IAT_CLOCK_SKEW_S + 5, 3600, 86_400 * 365]) {
      const r = await get(await token(now() + ahead));
      assertProblem(r, 401, /iat claim lies in the future/);
    }
  });

  it('accepts a token issued a few seconds ahead (keepers with slightly different clocks) and one issued earlier', async () => {
    assert.equal((await get(await token(now() + 10))).status, 200);
    assert.equal((await get(await token(now() - 3600))).status, 200);
  });

  for (const kb of [60, 80, 100]) {
    it(`answers a ${kb} KB token with a problem body, not a bare status`, async () => {
      const res = await fetch(`${tk.baseUrl}/v1/souls`, {
        headers: { Authorization: `Bearer ${'e'.repeat(kb * 1024)}` },
      });
      assert.ok(res.status === 431 || res.status === 401, `status ${res.status}`);
      assert.equal(res.headers.get('content-type'), 'application/problem+json');
      const body = (await res.json()) as { status: number; title: string; detail: string };
      assert.equal(body.status, res.status);
      assert.ok(body.detail.length > 0);
    });
  }
});
