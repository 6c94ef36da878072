// Taking back what was added to the catalog (issue 31, "Remove and revoke"), on the real stack with a
// real keeper, its workflows and a local git repository: a service an incarnation uses cannot be
// removed (409 naming it); once none does, the service and its versions go. A yanked version is
// offered to no one and starts nothing new, while the incarnations on it keep running.
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { serviceRepo, type ServiceRepo } from '../support/service-repo';
import { waitFor } from '../agents/harness';
import { assertProblem, clientFor, operatorToken, registryFingerprint } from './helpers';

describe('Operator API: removing services and yanking versions', function () {
  this.timeout(180_000);
  let k: TestKeeper;
  let repo: ServiceRepo;
  const api = (...args: Parameters<ReturnType<typeof clientFor>>) => clientFor(k)(...args);

  /** An incarnation of `service` on no host (allow_empty): its create run commits at once. */
  const createBody = (name: string, service: string, version?: string) => ({
    name,
    service,
    covens: ['nobody-here'],
    input: { root: path.join(os.tmpdir(), name) },
    allow_empty: true,
    ...(version ? { version } : {}),
  });
  const ready = (name: string) =>
    waitFor(
      `${name} to be ready`,
      async () => {
        const r = await api('GET', `/v1/incarnations/${name}`);
        return r.body?.status === 'ready' ? r.body : undefined;
      },
      60_000,
      200,
    );
  async function incarnation(name: string, service: string, version?: string): Promise<any> {
    const r = await api('POST', '/v1/incarnations', { body: createBody(name, service, version) });
    assert.equal(r.status, 202, r.text);
    return ready(name);
  }

  before(async () => {
    k = await startTestKeeper();
    repo = serviceRepo({ tags: ['v1', 'v2'] });
    for (const name of ['motd', 'spare'])
      assert.equal((await api('POST', '/v1/services', { body: { name, git: repo.url, ref: 'v1' } })).status, 201);
  });
  after(async () => {
    await k?.stop();
  });

  it('DELETE /v1/services/{name} is 409 naming the incarnations that use it, and changes nothing', async () => {
    await incarnation('motd-a', 'motd');
    await incarnation('motd-b', 'motd');
    const before = await registryFingerprint(k.keeper.runtime.db);
    const r = await api('DELETE', '/v1/services/motd');
    assertProblem(
      r,
      409,
      /^service motd is used by 2 incarnation\(s\): motd-a, motd-b; delete them first \(keeperctl incarnations delete <name>\)$/,
    );
    assert.equal(await registryFingerprint(k.keeper.runtime.db), before);
    assert.equal((await api('GET', '/v1/services/motd')).status, 200);
  });

  it('once no incarnation uses it: 204, the service and its versions are gone, and the name can be registered again', async () => {
    for (const n of ['motd-a', 'motd-b'])
      assert.equal((await api('DELETE', `/v1/incarnations/${n}?force=true`)).status, 200);
    const r = await api('DELETE', '/v1/services/motd');
    assert.equal(r.status, 204, r.text);
    assertProblem(await api('GET', '/v1/services/motd'), 404);
    assertProblem(await api('GET', '/v1/services/motd/versions'), 404);
    assert.deepEqual(
      (await api('GET', '/v1/services')).body.items.map((s: any) => s.name),
      ['spare'],
    );
    assertProblem(await api('DELETE', '/v1/services/motd'), 404, /service motd is not in the catalog/);
    // The deleted incarnations' runs stay readable under their names.
    assert.equal((await api('GET', '/v1/incarnations/motd-a/runs')).status, 200);
    assert.equal((await api('POST', '/v1/services', { body: { name: 'motd', git: repo.url, ref: 'v2' } })).status, 201);
  });

  it('a viewer holds no services:delete (403); an operator does', async () => {
    const viewer = await operatorToken(k, 'vic', 'viewer');
    assertProblem(
      await clientFor(k, viewer)('DELETE', '/v1/services/spare'),
      403,
      /lacks the permission services:delete/,
    );
    const op = await operatorToken(k, 'ops', 'operator');
    assert.equal((await clientFor(k, op)('DELETE', '/v1/services/spare')).status, 204);
  });

  it('yank: never offered as newer, refused for creates, plans of creates and upgrades (409 with the reason); incarnations on it keep running and show it', async () => {
    assert.equal((await api('POST', '/v1/services', { body: { name: 'shop', git: repo.url, ref: 'v1' } })).status, 201);
    assert.equal((await api('POST', '/v1/services/shop/versions', { body: { ref: 'v2' } })).status, 201);
    await incarnation('shop-old', 'shop', 'v1');
    await incarnation('shop-on', 'shop', 'v2');
    assert.equal((await api('GET', '/v1/incarnations/shop-old')).body.newer_version, 'v2');

    const y = await api('POST', '/v1/services/shop/versions/v2/yank', { body: { reason: 'breaks the banner' } });
    assert.equal(y.status, 200, y.text);
    assert.equal(y.body.yanked.reason, 'breaks the banner');
    assert.equal(y.body.yanked.yanked_by, 'admin');
    const listed = (await api('GET', '/v1/services/shop/versions')).body.items;
    assert.deepEqual(
      listed.map((v: any) => [v.version, v.yanked?.reason ?? null]),
      [
        ['v2', 'breaks the banner'],
        ['v1', null],
      ],
    );

    const old = (await api('GET', '/v1/incarnations/shop-old')).body;
    assert.deepEqual(
      [old.version, old.newer_version, old.version_yanked],
      ['v1', null, null],
      'a yanked version is not offered',
    );
    const on = (await api('GET', '/v1/incarnations/shop-on')).body;
    assert.deepEqual(
      [on.version, on.newer_version, on.version_yanked?.reason],
      ['v2', null, 'breaks the banner'],
      'no older version is offered as newer either',
    );
    const inList = (await api('GET', '/v1/incarnations?service=shop')).body.items.find(
      (i: any) => i.name === 'shop-on',
    );
    assert.equal(inList.version_yanked.reason, 'breaks the banner');

    const yankRule = /^version v2 of service shop was yanked at \S+ by admin: breaks the banner; choose another/;
    const before = await registryFingerprint(k.keeper.runtime.db);
    assertProblem(await api('POST', '/v1/incarnations', { body: createBody('shop-new', 'shop', 'v2') }), 409, yankRule);
    const { name: _n, ...planBody } = createBody('shop-new', 'shop', 'v2');
    assertProblem(
      await api('POST', '/v1/incarnations/shop-new/plans', { body: { operation: 'create', ...planBody } }),
      409,
      yankRule,
    );
    assertProblem(await api('POST', '/v1/incarnations/shop-old/upgrade', { body: { version: 'v2' } }), 409, yankRule);
    assertProblem(
      await api('POST', '/v1/services/shop/versions/v2/yank', { body: { reason: 'again' } }),
      409,
      /yanked already .*: breaks the banner$/,
    );
    assert.equal(await registryFingerprint(k.keeper.runtime.db), before);
    assertProblem(await api('GET', '/v1/incarnations/shop-new'), 404);
    assert.equal((await api('GET', '/v1/incarnations/shop-old')).body.version, 'v1');

    // The one on it keeps running: an operation runs with its pinned version.
    const run = await api('POST', '/v1/incarnations/shop-on/runs', {
      body: {
        operation: 'update',
        input: { root: path.join(os.tmpdir(), 'shop-on'), message: 'still here' },
        allow_empty: true,
      },
    });
    assert.equal(run.status, 202, run.text);
    const after = await waitFor(
      'the update to commit',
      async () => {
        const r = (await api('GET', `/v1/incarnations/shop-on/runs/${run.body.apply_id}`)).body;
        return r?.status === 'succeeded' ? r : undefined;
      },
      60_000,
      200,
    );
    assert.equal(after.service_ref, 'v2');
    // A create without a version takes the newest version that is not yanked.
    assert.equal((await incarnation('shop-default', 'shop')).version, 'v1');
    // A version published later is offered to the incarnation on the yanked one.
    repo.tag('v3');
    assert.equal((await api('POST', '/v1/services/shop/versions', { body: { ref: 'v3' } })).status, 201);
    assert.equal((await api('GET', '/v1/incarnations/shop-on')).body.newer_version, 'v3');
  });

  it('yank needs a reason (400 naming /body/reason), a published version (404) and services:yank (a viewer gets 403)', async () => {
    const blank = await api('POST', '/v1/services/shop/versions/v1/yank', { body: { reason: ' ' } });
    assertProblem(blank, 400);
    assert.equal(blank.body.errors[0].path, '/body/reason', blank.text);
    assertProblem(await api('POST', '/v1/services/shop/versions/v1/yank', { body: {} }), 400);
    assertProblem(
      await api('POST', '/v1/services/shop/versions/v9/yank', { body: { reason: 'x' } }),
      404,
      /version v9 of service shop is not published/,
    );
    const viewer = (await api('POST', '/v1/archons/vic/tokens')).body.token as string;
    assertProblem(
      await clientFor(k, viewer)('POST', '/v1/services/shop/versions/v1/yank', { body: { reason: 'x' } }),
      403,
      /lacks the permission services:yank/,
    );
    assert.equal((await api('GET', '/v1/services/shop/versions/v1')).body.yanked, null);
  });
});
