// Secret inputs belong to one incarnation's lifetime (issue 28), against the real store with the
// keeper policy of scripts/provision-secretstore.js: a value given to a secret input is stored
// below the incarnation's name and the key of its life; a forced delete removes it from the store;
// an incarnation made again with the same name cannot use the deleted one's reference, even with a
// value put back at that path (as a purge that failed would leave it): render refuses it and the
// host is never written.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { deleteSecret, putSecret, secretStoreCall } from '../support/secretstore';
import { createKeeperAppRole, useAppRole, type TestAppRole } from '../secrets/approle';
import { writeCanaryService } from '../secrets/service';
import { api, gitRepoFrom, settled, startSouls, tempDir, type TestSoul } from '../runs/keeper';

describe("secret inputs: one incarnation's lifetime (real store, real soul)", function () {
  this.timeout(240_000);
  const id = randomBytes(3).toString('hex');
  const prefix = `secret/keeper/services/life-${id}/`;
  const inc = `life-${id}`;
  const FIRST = `first-${randomBytes(6).toString('hex')}`;
  let root: string;
  let role: TestAppRole;
  let k: TestKeeper;
  let souls: TestSoul[];
  let storedAt: string | undefined;

  before(async () => {
    root = tempDir('secret-life-');
    role = await createKeeperAppRole(root);
    await putSecret('secret', `keeper/services/life-${id}/db`, { password: 'db-pw' });
    k = await startTestKeeper({ mutate: (doc) => useAppRole(doc, role) });
    souls = await startSouls(k, path.join(root, 'souls'), [['life']]);
    const src = path.join(root, 'src');
    writeCanaryService(src, { name: 'life', prefix, readPath: `${prefix}db` });
    const r = await api(k, 'POST', '/v1/services', {
      name: 'life',
      git: gitRepoFrom(src, path.join(root, 'repo'), 'v1'),
      ref: 'v1',
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  });
  after(async () => {
    await Promise.all((souls ?? []).map((s) => s.run.kill()));
    await k?.stop();
    await role?.remove();
    await deleteSecret('secret', `keeper/services/life-${id}/db`).catch(() => undefined);
    if (storedAt) await secretStoreCall('DELETE', `secret/metadata/${storedAt}`).catch(() => undefined);
    fs.rmSync(root, { recursive: true, force: true });
  });

  const out = (name: string) => path.join(root, name);
  const conf = (name: string) => path.join(out(name), souls[0]!.sid, 'app.conf');

  it("stores the value under the incarnation's name and life, removes it on a forced delete, and a new incarnation of that name cannot use it", async () => {
    const created = await api(k, 'POST', '/v1/incarnations', {
      name: inc,
      service: 'life',
      covens: ['life'],
      input: { root: out('one'), api_token: FIRST },
    });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    const first = created.body.apply_id as string;
    assert.equal((await settled(k, inc, 120_000)).status, 'ready');
    assert.match(fs.readFileSync(conf('one'), 'utf8'), new RegExp(`token = ${FIRST}`));
    storedAt = `keeper/services/incarnations/${inc}/${first}/runs/${first}`;
    const report = (await api(k, 'GET', `/v1/incarnations/${inc}/runs/${first}`)).body;
    assert.equal(
      report.input.api_token,
      `secretstore:secret/${storedAt}#api_token`,
      'keyed by the life of the incarnation (its create run)',
    );
    assert.equal((await secretStoreCall('GET', `secret/data/${storedAt}`)).data.data.api_token, FIRST);

    const gone = await api(k, 'DELETE', `/v1/incarnations/${inc}?force=true`);
    assert.equal(gone.status, 200, JSON.stringify(gone.body));
    await assert.rejects(
      secretStoreCall('GET', `secret/data/${storedAt}`),
      /HTTP 404/,
      'the value left the store with the incarnation',
    );
    await assert.rejects(secretStoreCall('GET', `secret/metadata/${storedAt}`), /HTTP 404/, 'every version of it');

    // As a purge that failed would leave it: the value is back at the old path.
    await putSecret('secret', storedAt, { api_token: FIRST });
    const again = await api(k, 'POST', '/v1/incarnations', {
      name: inc,
      service: 'life',
      covens: ['life'],
      input: { root: out('two'), api_token: `secretstore:secret/${storedAt}#api_token` },
    });
    assert.equal(again.status, 202, JSON.stringify(again.body));
    const locked = await settled(k, inc, 120_000);
    assert.equal(locked.status, 'error_locked');
    const refused = (await api(k, 'GET', `/v1/incarnations/${inc}/runs/${again.body.apply_id}`)).body;
    assert.equal(refused.hosts.length, 0, 'nothing was dispatched');
    assert.equal(refused.render_errors.length, 1, JSON.stringify(refused.render_errors));
    assert.match(refused.render_errors[0].message, new RegExp(`input "api_token": secret/${storedAt} is outside`));
    assert.ok(!fs.existsSync(conf('two')), "the host never got the deleted incarnation's value");
  });
});
