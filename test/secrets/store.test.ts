// The keeper's AppRole policy for scenario secrets (scripts/provision-secretstore.js), on the real
// store, KV v2 (`secret/`) and KV v1 (`kv1/`): read below the scenario prefix, write values of secret
// inputs below `<prefix>incarnations/` only, and nothing outside.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { connectSecretStore, type SecretStore } from '../../secrets/client';
import { SecretStoreError } from '../../secrets/errors';
import { tempDir } from '../runs/keeper';
import { putSecret, secretStoreCall } from '../support/secretstore';
import { stackEnv } from '../support/stack-env';
import { createKeeperAppRole, type TestAppRole } from './approle';

describe('secrets store: the keeper policy for scenario secrets, KV v1 and v2', function () {
  this.timeout(60_000);
  const id = randomBytes(4).toString('hex');
  let dir: string;
  let role: TestAppRole;
  let store: SecretStore;

  before(async () => {
    dir = tempDir('secrets-store-');
    role = await createKeeperAppRole(dir);
    store = await connectSecretStore({ addr: stackEnv().SECRETSTORE_ADDR, auth: { method: 'approle', role_id: role.roleId, secret_id_file: role.secretIdFile }, pki_mount: 'pki', pki_role: 'soul' });
  });
  after(async () => {
    store?.close();
    for (const p of [`secret/metadata/keeper/services/t-${id}/db`, `secret/metadata/keeper/services/incarnations/t-${id}/runs/r1`, `kv1/keeper/services/t-${id}/db`, `kv1/keeper/services/incarnations/t-${id}/runs/r1`]) {
      await secretStoreCall('DELETE', p).catch(() => undefined);
    }
    await role?.remove();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  for (const mount of ['secret', 'kv1'] as const) {
    it(`${mount}/ (KV ${mount === 'secret' ? 'v2' : 'v1'}): reads below the prefix and writes secret inputs below incarnations/`, async () => {
      await putSecret(mount, `keeper/services/t-${id}/db`, { password: `pw-${mount}` });
      assert.deepEqual(await store.readFields(`${mount}/keeper/services/t-${id}/db`), { password: `pw-${mount}` });
      await store.writeFields(`${mount}/keeper/services/incarnations/t-${id}/runs/r1`, { api_token: `tok-${mount}` });
      const back = mount === 'secret'
        ? (await secretStoreCall('GET', `secret/data/keeper/services/incarnations/t-${id}/runs/r1`)).data.data
        : (await secretStoreCall('GET', `kv1/keeper/services/incarnations/t-${id}/runs/r1`)).data;
      assert.deepEqual(back, { api_token: `tok-${mount}` });
    });

    it(`${mount}/: an incarnation's secret inputs are deleted as a tree below incarnations/, and nothing outside it`, async () => {
      const base = `${mount}/keeper/services/incarnations/gone-${id}`;
      await store.writeFields(`${base}/k1/runs/r1`, { a: '1' });
      await store.writeFields(`${base}/k1/runs/r2`, { a: '2' });
      await store.writeFields(`${base}/k2/runs/r1`, { a: '3' });
      assert.equal(await store.deleteTree(`${base}/k1/`), 2);
      await assert.rejects(store.readFields(`${base}/k1/runs/r1`), (e: unknown) => e instanceof SecretStoreError && e.kind === 'not_found');
      assert.deepEqual(await store.readFields(`${base}/k2/runs/r1`), { a: '3' }, 'another life of the name is untouched');
      assert.equal(await store.deleteTree(`${base}/k1/`), 0, 'deleting again finds nothing');
      assert.equal(await store.deleteTree(`${base}/`), 1);
      await assert.rejects(store.deleteTree(`${mount}/keeper/services/t-${id}/`), (e: unknown) => e instanceof SecretStoreError && e.kind === 'denied');
    });

    it(`${mount}/: no write outside incarnations/, no read outside the keeper's paths`, async () => {
      await assert.rejects(store.writeFields(`${mount}/keeper/services/t-${id}/db`, { password: 'x' }), (e: unknown) => e instanceof SecretStoreError && e.kind === 'denied');
      await assert.rejects(store.readFields(`${mount}/other-${id}/db`), (e: unknown) => e instanceof SecretStoreError && e.kind === 'denied');
    });
  }
});
