// A secrets-store outage at dispatch (interface spec 7, outage table; issue 12): the hosts whose
// steps need a secret fail with the reason and are sent nothing, nothing is committed, a run that
// needs no secret goes on; once the store is back, unlock with retry succeeds and reads the value
// afresh. The keeper under test reaches the store through a relay the test stops and starts.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { gitRepoFrom, settled, startSouls, tempDir, type TestSoul } from '../runs/keeper';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { deleteSecret, putSecret } from '../support/secretstore';
import { stackEnv } from '../support/stack-env';
import { createKeeperAppRole, useAppRole, type TestAppRole } from './approle';
import { startStoreRelay, type StoreRelay } from './proxy';
import { writeCanaryService } from './service';

describe('secrets: a store outage at dispatch', function () {
  this.timeout(300_000);
  const id = randomBytes(4).toString('hex');
  const prefix = `secret/keeper/services/outage-${id}/`;
  const tokenRef = `secretstore:${prefix}api#token`;
  let root: string;
  let relay: StoreRelay;
  let role: TestAppRole;
  let k: TestKeeper;
  let souls: TestSoul[] = [];

  const api = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(`${k.baseUrl}${p}`, {
      method,
      headers: { Authorization: `Bearer ${k.adminToken}`, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const conf = () => fs.readFileSync(path.join(root, 'out', souls[0]!.sid, 'app.conf'), 'utf8');

  before(async () => {
    root = tempDir('secrets-outage-');
    role = await createKeeperAppRole(root);
    relay = await startStoreRelay(stackEnv().SECRETSTORE_ADDR);
    await putSecret('secret', `keeper/services/outage-${id}/db`, { password: 'before-outage' });
    await putSecret('secret', `keeper/services/outage-${id}/api`, { token: 'api-token' });
    k = await startTestKeeper({
      mutate: (doc) => {
        useAppRole(doc, role);
        doc.secretstore.addr = relay.addr;
      },
    });
    souls = await startSouls(k, path.join(root, 'souls'), [['outage']]);
    const src = path.join(root, 'src');
    writeCanaryService(src, { name: 'withsecret', prefix, readPath: `${prefix}db` });
    const plain = path.join(root, 'plain');
    fs.mkdirSync(path.join(plain, 'scenario', 'create'), { recursive: true });
    fs.writeFileSync(path.join(plain, 'service.yml'), 'name: plain\nstate_schema_version: 1\n');
    fs.writeFileSync(
      path.join(plain, 'scenario', 'create', 'main.yml'),
      'input:\n  root: {type: string}\ntasks:\n  - name: plain\n    module: core.file.present\n    params:\n      path: "${input.root + \'/\' + soulprint.self.fqdn + \'/plain\'}"\n      content: "no secret\\n"\n',
    );
    for (const [name, dir] of [
      ['withsecret', src],
      ['plain', plain],
    ]) {
      const r = await api('POST', '/v1/services', {
        name,
        git: gitRepoFrom(dir, path.join(root, `${name}-repo`), 'v1'),
        ref: 'v1',
      });
      assert.equal(r.status, 201, JSON.stringify(r.body));
    }
  });
  after(async () => {
    await relay?.start().catch(() => undefined);
    await Promise.all(souls.map((s) => s.run.kill()));
    await k?.stop();
    await relay?.close();
    await role?.remove();
    await deleteSecret('secret', `keeper/services/outage-${id}/db`).catch(() => undefined);
    await deleteSecret('secret', `keeper/services/outage-${id}/api`).catch(() => undefined);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('fails the hosts needing a secret with the reason and commits nothing; a run needing none goes on; a retry succeeds once the store is back', async () => {
    const input = { root: path.join(root, 'out'), api_token: tokenRef };
    assert.equal(
      (await api('POST', '/v1/incarnations', { name: `sec-${id}`, service: 'withsecret', covens: ['outage'], input }))
        .status,
      202,
    );
    const ready = await settled(k, `sec-${id}`, 120_000);
    assert.equal(ready.status, 'ready');
    assert.match(conf(), /password = before-outage/);

    await relay.stop();
    await putSecret('secret', `keeper/services/outage-${id}/db`, { password: 'after-outage' }); // written beside the relay
    // A value for a secret input cannot be stored now: refused, nothing recorded.
    const refused = await api('POST', `/v1/incarnations/sec-${id}/runs`, {
      operation: 'create',
      input: { ...input, api_token: 'plain-value' },
    });
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
    assert.match(refused.body.detail, /secrets store/);

    const run = await api('POST', `/v1/incarnations/sec-${id}/runs`, { operation: 'create', input });
    assert.equal(run.status, 202, JSON.stringify(run.body));
    const locked = await settled(k, `sec-${id}`, 120_000);
    assert.equal(locked.status, 'error_locked');
    const report = (await api('GET', `/v1/incarnations/sec-${id}/runs/${run.body.apply_id}`)).body;
    const host = report.hosts[0];
    assert.equal(host.status, 'failed');
    assert.match(
      host.reason,
      new RegExp(
        `^cannot read secretstore:${prefix}db#password: the secrets store at ${relay.addr} is unreachable .*; nothing was sent to this host$`,
      ),
    );
    assert.deepEqual(
      host.steps.map((s: any) => s.status),
      ['skipped'],
    );
    assert.match(conf(), /password = before-outage/); // nothing applied
    assert.deepEqual(locked.state, ready.state); // nothing committed

    // Another incarnation, no secret: goes on while the store is down.
    assert.equal(
      (
        await api('POST', '/v1/incarnations', {
          name: `plain-${id}`,
          service: 'plain',
          covens: ['outage'],
          input: { root: path.join(root, 'out') },
        })
      ).status,
      202,
    );
    assert.equal((await settled(k, `plain-${id}`, 120_000)).status, 'ready');
    assert.equal(fs.readFileSync(path.join(root, 'out', souls[0]!.sid, 'plain'), 'utf8'), 'no secret\n');

    await relay.start();
    const retry = await api('POST', `/v1/incarnations/sec-${id}/unlock`, { retry: true });
    assert.equal(retry.status, 202, JSON.stringify(retry.body));
    assert.equal((await settled(k, `sec-${id}`, 120_000)).status, 'ready');
    assert.match(conf(), /password = after-outage/);
  });
});
