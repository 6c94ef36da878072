// The service catalog and the operator registry through the Operator API.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { decodeJwt } from 'jose';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { serviceRepo, type ServiceRepo } from '../support/service-repo';
import { assertProblem, call, clientFor } from './helpers';

describe('Operator API: services and operators', function () {
  let tk: TestKeeper;
  let api: ReturnType<typeof clientFor>;
  let repo: ServiceRepo;

  before(async () => {
    // Registration clones, resolves and lints: the catalog entries are a real (local) repository.
    repo = serviceRepo({ tags: ['v1.4.0'] });
    tk = await startTestKeeper();
    api = clientFor(tk);
  });
  after(async () => {
    await tk?.stop();
    if (repo) fs.rmSync(repo.dir, { recursive: true, force: true });
  });

  it("registers a service whose version is its ref, and answers 409 for a taken name", async () => {
    const body = { name: 'nginx', git: repo.url, ref: 'v1.4.0' };
    const a = await api('POST', '/v1/services', { body });
    assert.equal(a.status, 201, a.text);
    assert.deepEqual({ name: a.body.name, git: a.body.git, ref: a.body.ref, version: a.body.version, created_by: a.body.created_by },
      { ...body, version: 'v1.4.0', created_by: 'admin' });
    assertProblem(await api('POST', '/v1/services', { body: { ...body, ref: 'v2' } }), 409, /already registered/);
    const got = await api('GET', '/v1/services/nginx');
    assert.equal(got.body.version, 'v1.4.0');
    assertProblem(await api('GET', '/v1/services/nope'), 404);
  });

  it('lists services by name, page by page', async () => {
    for (const n of ['svc-b', 'svc-a', 'svc-c']) {
      assert.equal((await api('POST', '/v1/services', { body: { name: n, git: repo.url, ref: 'main' } })).status, 201);
    }
    const first = await api('GET', '/v1/services?limit=2');
    assert.deepEqual(first.body.items.map((s: { name: string }) => s.name), ['nginx', 'svc-a']);
    const second = await api('GET', `/v1/services?limit=2&cursor=${first.body.next_cursor}`);
    assert.deepEqual(second.body.items.map((s: { name: string }) => s.name), ['svc-b', 'svc-c']);
    assert.equal(second.body.next_cursor, null);
  });

  it('refuses a service with a bad name, URL or ref, naming each field', async () => {
    const a = await api('POST', '/v1/services', { body: { name: 'Bad Name', git: 'not a url', ref: '../etc' } });
    assertProblem(a, 400);
    assert.deepEqual(a.body.errors.map((e: { path: string }) => e.path).sort(), ['/body/git', '/body/name', '/body/ref']);
  });

  it('creates operators with a built-in role and lists and gets them with their permissions', async () => {
    const a = await api('POST', '/v1/archons', { body: { aid: 'alice@example.com', role: 'operator' } });
    assert.equal(a.status, 201, a.text);
    assert.equal(a.body.created_by, 'admin');
    assert.ok(a.body.permissions.includes('souls:*'));
    assertProblem(await api('POST', '/v1/archons', { body: { aid: 'alice@example.com', role: 'viewer' } }), 409);
    const badRole = await api('POST', '/v1/archons', { body: { aid: 'bob', role: 'root' } });
    assertProblem(badRole, 400);
    assert.match(badRole.body.errors[0].message, /cluster-admin, operator, viewer/);
    assertProblem(await api('POST', '/v1/archons', { body: { aid: 'x', role: 'viewer' } }), 400);
    const list = await api('GET', '/v1/archons');
    assert.deepEqual(list.body.items.map((x: { aid: string }) => x.aid), ['admin', 'alice@example.com']);
    assert.equal((await api('GET', '/v1/archons/admin')).body.role, 'cluster-admin');
    assertProblem(await api('GET', '/v1/archons/ghost'), 404);
  });

  it('issues an operator token valid for auth.jwt.ttl_default that works at once', async () => {
    const a = await api('POST', '/v1/archons/alice@example.com/tokens');
    assert.equal(a.status, 201, a.text);
    assert.equal(a.body.token_type, 'Bearer');
    const claims = decodeJwt(a.body.token);
    assert.equal(claims.sub, 'alice@example.com');
    assert.equal(claims.iss, tk.config.auth.jwt.issuer);
    assert.equal((claims.exp! - claims.iat!) * 1000, tk.config.auth.jwt.ttl_default_ms);
    const asAlice = await call(tk.baseUrl, 'POST', '/v1/souls', { token: a.body.token, body: { sid: 'alice-host.example.com', transport: 'agent', covens: [] } });
    assert.equal(asAlice.status, 201, asAlice.text);
    assertProblem(await call(tk.baseUrl, 'POST', '/v1/archons/admin/tokens', { token: a.body.token }), 403, /archons:issue-token/);
    assertProblem(await api('POST', '/v1/archons/ghost/tokens'), 404);
  });
});
