// Hardening of the Operator API listener (issue 3 item 7): limits, content types, problem bodies
// everywhere, and no token, header or stack in any response or log line.
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { createLogger } from '../../common/logger';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { assertProblem, call, clientFor } from './helpers';

describe('Operator API: hardening', function () {
  let tk: TestKeeper;
  let api: ReturnType<typeof clientFor>;
  const logLines: string[] = [];

  before(async () => {
    tk = await startTestKeeper({ log: createLogger({ level: 'debug', write: (l) => logLines.push(l) }) });
    api = clientFor(tk);
  });
  after(async () => {
    await tk?.stop();
  });

  const json = { 'content-type': 'application/json' };

  it('answers 413 for a body over 1 MiB, and accepts one just under it', async () => {
    const big = JSON.stringify({
      sid: 'big.example.com',
      transport: 'agent',
      covens: [],
      pad: 'x'.repeat(1024 * 1024),
    });
    assertProblem(await api('POST', '/v1/souls', { raw: big, headers: json }), 413, /1048576 bytes/);
    const under = JSON.stringify({
      sid: 'big.example.com',
      transport: 'agent',
      covens: [],
      pad: 'x'.repeat(1000 * 1000),
    });
    assertProblem(await api('POST', '/v1/souls', { raw: under, headers: json }), 400, /not valid/);
  });

  it('answers 415 for a body that is not JSON, or not identity-encoded', async () => {
    assertProblem(
      await api('POST', '/v1/souls', {
        raw: 'sid=a.example.com',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      415,
    );
    assertProblem(await api('POST', '/v1/souls', { raw: '{}', headers: { 'content-type': 'text/plain' } }), 415);
    assertProblem(await api('POST', '/v1/souls', { raw: '{}', headers: {} }), 415);
    const gz = gzipSync(JSON.stringify({ sid: 'gz.example.com', transport: 'agent', covens: [] }));
    assertProblem(await api('POST', '/v1/souls', { raw: gz, headers: { ...json, 'content-encoding': 'gzip' } }), 415);
  });

  it('answers 400 for invalid JSON, over-deep JSON, a missing body, or a body where none is taken', async () => {
    assertProblem(await api('POST', '/v1/souls', { raw: '{"sid":', headers: json }), 400, /not valid JSON/);
    const deep = '{"a":'.repeat(33) + '1' + '}'.repeat(33);
    assertProblem(await api('POST', '/v1/souls', { raw: deep, headers: json }), 400, /deeper than 32/);
    assertProblem(await api('POST', '/v1/souls'), 400, /needs a JSON body/);
    assertProblem(
      await api('POST', '/v1/archons/admin/tokens', { body: { ttl: '10y' } }),
      400,
      /takes no request body/,
    );
    assertProblem(await api('GET', '/v1/souls?limit=10&sort=desc'), 400);
    assertProblem(await api('GET', '/v1/souls/%E0%A4%A'), 400);
  });

  it('answers unknown /v1 routes with 404 after authentication, wrong methods with 405, and other paths with a 404 problem', async () => {
    assertProblem(await api('GET', '/v1/nothing-here'), 404);
    assertProblem(await call(tk.baseUrl, 'GET', '/v1/nothing-here'), 401);
    const wrong = await api('DELETE', '/v1/souls');
    assertProblem(wrong, 405);
    assert.equal(wrong.headers.get('allow'), 'POST, GET, HEAD');
    assertProblem(await call(tk.baseUrl, 'GET', '/no/such/page'), 404);
  });

  it('marks /v1 answers no-store and nosniff, since some carry tokens', async () => {
    const a = await api('GET', '/v1/souls');
    assert.equal(a.headers.get('cache-control'), 'no-store');
    assert.equal(a.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(a.headers.get('x-powered-by'), null);
  });

  it('serves the OpenAPI 3.1 document and the /docs viewer from this keeper', async () => {
    const doc = await call(tk.baseUrl, 'GET', '/openapi.json');
    assert.equal(doc.status, 200);
    assert.equal(doc.body.openapi, '3.1.0');
    assert.ok(doc.body.paths['/v1/souls/{sid}/issue-token'].post);
    const page = await call(tk.baseUrl, 'GET', '/docs');
    assert.equal(page.status, 200);
    assert.match(page.text, /<script src="\/docs\/scalar.js"><\/script>/);
    assert.match(page.headers.get('content-security-policy') ?? '', /connect-src 'self'/);
    const bundle = await fetch(`${tk.baseUrl}/docs/scalar.js`);
    assert.equal(bundle.status, 200);
    // The 3.5 MB bundle goes out compressed (fetch asks for gzip and Brotli, and unpacks it).
    assert.match(bundle.headers.get('content-encoding') ?? '', /^(br|gzip)$/);
    const sent = Number(bundle.headers.get('content-length'));
    const body = await bundle.arrayBuffer();
    assert.ok(body.byteLength > 1_000_000, `${body.byteLength} bytes unpacked`);
    assert.ok(sent < body.byteLength / 2, `${sent} bytes sent for ${body.byteLength}`);
  });

  it('never writes a token, an Authorization header or a stack into a log line', async () => {
    const reg = await api('POST', '/v1/souls', { body: { sid: 'logged.example.com', transport: 'agent', covens: [] } });
    const reissued = await api('POST', '/v1/souls/logged.example.com/issue-token?force=true');
    const op = await api('POST', '/v1/archons', { body: { aid: 'logged-op', role: 'viewer' } });
    const jwt = await api('POST', '/v1/archons/logged-op/tokens');
    assert.deepEqual([reg.status, reissued.status, op.status, jwt.status], [201, 201, 201, 201]);
    await api('GET', '/v1/souls', { token: 'forged.token.value' });
    assert.ok(
      logLines.some((l) => l.includes('"api request"')),
      'requests are logged',
    );
    const secrets = [
      tk.adminToken,
      reg.body.bootstrap_token,
      reissued.body.bootstrap_token,
      jwt.body.token,
      'forged.token.value',
      'Bearer',
    ];
    for (const line of logLines) {
      for (const s of secrets) assert.ok(!line.includes(s), `log line leaks a secret: ${line.slice(0, 120)}`);
      assert.doesNotMatch(line, /\n\s+at /);
    }
  });
});
