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

  it('registers a service whose version is its ref, and answers 409 for a taken name', async () => {
    const body = { name: 'nginx', git: repo.url, ref: 'v1.4.0' };
    const a = await api('POST', '/v1/services', { body });
    assert.equal(a.status, 201, a.text);
    assert.deepEqual(
      { name: a.body.name, git: a.body.git, ref: a.body.ref, version: a.body.version, created_by: a.body.created_by },
      { ...body, version: 'v1.4.0', created_by: 'admin' },
    );
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
    assert.deepEqual(
      first.body.items.map((s: { name: string }) => s.name),
      ['nginx', 'svc-a'],
    );
    const second = await api('GET', `/v1/services?limit=2&cursor=${first.body.next_cursor}`);
    assert.deepEqual(
      second.body.items.map((s: { name: string }) => s.name),
      ['svc-b', 'svc-c'],
    );
    assert.equal(second.body.next_cursor, null);
  });

  it('checks a service at registration: a missing repository, a ref that does not resolve or lint errors are a 422 with the reason, and nothing is stored', async () => {
    const missing = await api('POST', '/v1/services', {
      body: { name: 'ghost', git: `file://${repo.dir}-does-not-exist`, ref: 'v1' },
    });
    assertProblem(missing, 422, /service ghost cannot be loaded from .*: git clone: the repository was not found/);
    assert.equal(missing.body.errors[0].path, '/body/git', 'the URL is what to fix');
    const unresolved = await api('POST', '/v1/services', { body: { name: 'ghost', git: repo.url, ref: 'v9.9.9' } });
    assertProblem(unresolved, 422, /ref "v9\.9\.9" not found in the repository/);
    assert.equal(unresolved.body.errors[0].path, '/body/ref');
    const broken = serviceRepo({ fixture: 'broken-scenario', tags: ['v1'] });
    try {
      const linted = await api('POST', '/v1/services', { body: { name: 'ghost', git: broken.url, ref: 'v1' } });
      assertProblem(
        linted,
        422,
        /fails soul-lint with 10 error\(s\): scenario\/create\/main\.yml:4:14 SL008: default of input "port" is a string/,
      );
      assert.ok(
        linted.body.errors.some(
          (e: { message: string }) =>
            e.message === 'scenario/create/main.yml:10:13 SL009: unknown module "core.pkg.instaled"',
        ),
        linted.text,
      );
    } finally {
      fs.rmSync(broken.dir, { recursive: true, force: true });
    }
    assertProblem(await api('GET', '/v1/services/ghost'), 404);
    const names = (await api('GET', '/v1/services?limit=100')).body.items.map((s: { name: string }) => s.name);
    assert.ok(!names.includes('ghost'));
  });

  it('publishes the registered ref as the first version, pinned to its commit', async () => {
    const list = await api('GET', '/v1/services/nginx/versions');
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(
      list.body.items.map((v: { version: string; commit: string; state_schema_version: number }) => [
        v.version,
        v.commit,
        v.state_schema_version,
      ]),
      [['v1.4.0', repo.git('rev-parse', 'v1.4.0^{commit}'), 3]],
    );
    const one = await api('GET', '/v1/services/nginx/versions/v1.4.0');
    assert.deepEqual(
      one.body.operations.map((o: { name: string }) => o.name),
      ['create', 'update'],
    );
    assertProblem(await api('GET', '/v1/services/nope/versions'), 404);
  });

  it('refuses a service with a bad name, URL or ref, naming each field', async () => {
    const a = await api('POST', '/v1/services', { body: { name: 'Bad Name', git: 'not a url', ref: '../etc' } });
    assertProblem(a, 400);
    assert.deepEqual(a.body.errors.map((e: { path: string }) => e.path).sort(), [
      '/body/git',
      '/body/name',
      '/body/ref',
    ]);
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
    assert.deepEqual(
      list.body.items.map((x: { aid: string }) => x.aid),
      ['admin', 'alice@example.com'],
    );
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
    const asAlice = await call(tk.baseUrl, 'POST', '/v1/souls', {
      token: a.body.token,
      body: { sid: 'alice-host.example.com', transport: 'agent', covens: [] },
    });
    assert.equal(asAlice.status, 201, asAlice.text);
    assertProblem(
      await call(tk.baseUrl, 'POST', '/v1/archons/admin/tokens', { token: a.body.token }),
      403,
      /archons:issue-token/,
    );
    assertProblem(await api('POST', '/v1/archons/ghost/tokens'), 404);
  });
});
