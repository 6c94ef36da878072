// Taking back what was added to the catalog (issue 31, "Remove and revoke"), on the real stack with a
// real keeper, its workflows and a local git repository: a service an incarnation uses cannot be
// removed (409 naming it); once none does, the service and its versions go.
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { serviceRepo, type ServiceRepo } from '../support/service-repo';
import { waitFor } from '../agents/harness';
import { assertProblem, clientFor, operatorToken, registryFingerprint } from './helpers';

describe('Operator API: removing services', function () {
  this.timeout(180_000);
  let k: TestKeeper;
  let repo: ServiceRepo;
  const api = (...args: Parameters<ReturnType<typeof clientFor>>) => clientFor(k)(...args);

  /** An incarnation of `service` on no host (allow_empty): its create run commits at once. */
  async function incarnation(name: string, service: string, version?: string): Promise<void> {
    const r = await api('POST', '/v1/incarnations', {
      body: { name, service, covens: ['nobody-here'], input: { root: path.join(os.tmpdir(), name) }, allow_empty: true, ...(version ? { version } : {}) },
    });
    assert.equal(r.status, 202, r.text);
    await waitFor(`${name} to be ready`, async () => (await api('GET', `/v1/incarnations/${name}`)).body?.status === 'ready', 60_000, 200);
  }

  before(async () => {
    k = await startTestKeeper();
    repo = serviceRepo({ tags: ['v1', 'v2'] });
    for (const name of ['motd', 'spare']) assert.equal((await api('POST', '/v1/services', { body: { name, git: repo.url, ref: 'v1' } })).status, 201);
  });
  after(async () => { await k?.stop(); });

  it('DELETE /v1/services/{name} is 409 naming the incarnations that use it, and changes nothing', async () => {
    await incarnation('motd-a', 'motd');
    await incarnation('motd-b', 'motd');
    const before = await registryFingerprint(k.keeper.runtime.db);
    const r = await api('DELETE', '/v1/services/motd');
    assertProblem(r, 409, /^service motd is used by 2 incarnation\(s\): motd-a, motd-b; delete them first \(keeperctl incarnations delete <name>\)$/);
    assert.equal(await registryFingerprint(k.keeper.runtime.db), before);
    assert.equal((await api('GET', '/v1/services/motd')).status, 200);
  });

  it('once no incarnation uses it: 204, the service and its versions are gone, and the name can be registered again', async () => {
    for (const n of ['motd-a', 'motd-b']) assert.equal((await api('DELETE', `/v1/incarnations/${n}?force=true`)).status, 200);
    const r = await api('DELETE', '/v1/services/motd');
    assert.equal(r.status, 204, r.text);
    assertProblem(await api('GET', '/v1/services/motd'), 404);
    assertProblem(await api('GET', '/v1/services/motd/versions'), 404);
    assert.deepEqual((await api('GET', '/v1/services')).body.items.map((s: any) => s.name), ['spare']);
    assertProblem(await api('DELETE', '/v1/services/motd'), 404, /service motd is not in the catalog/);
    // The deleted incarnations' runs stay readable under their names.
    assert.equal((await api('GET', '/v1/incarnations/motd-a/runs')).status, 200);
    assert.equal((await api('POST', '/v1/services', { body: { name: 'motd', git: repo.url, ref: 'v2' } })).status, 201);
  });

  it('a viewer holds no services:delete (403); an operator does', async () => {
    const viewer = await operatorToken(k, 'vic', 'viewer');
    assertProblem(await clientFor(k, viewer)('DELETE', '/v1/services/spare'), 403, /lacks the permission services:delete/);
    const op = await operatorToken(k, 'ops', 'operator');
    assert.equal((await clientFor(k, op)('DELETE', '/v1/services/spare')).status, 204);
  });
});
