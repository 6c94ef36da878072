// The secrets client against the real secrets store of the stack: AppRole login, KV v1 and v2
// detection, missing paths and fields, an unreachable store, the secret_id file's mode (0400), and
// token renewal.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SecretStore, connectSecretStore } from '../../secrets/client';
import { SecretStoreError } from '../../secrets/errors';
import { deleteSecret, putSecret } from '../support/secretstore';
import { stackEnv, stackFile } from '../support/stack-env';

function options(over: Partial<ConstructorParameters<typeof SecretStore>[0]> = {}) {
  return {
    addr: stackEnv().SECRETSTORE_ADDR,
    auth: { method: 'approle' as const, role_id: 'keeper', secret_id_file: stackFile('approle-secret-id') },
    pki_mount: 'pki',
    pki_role: 'soul',
    ...over,
  };
}

describe('secrets store client (real store)', () => {
  const name = `keeper/t-${randomBytes(4).toString('hex')}`;
  let store: SecretStore;

  before(async () => {
    await putSecret('secret', name, { dsn: 'postgres://v2', password: 'pw2', signing_key: 'k2' });
    await putSecret('kv1', name, { dsn: 'postgres://v1', password: 'pw1', signing_key: 'k1' });
    store = await connectSecretStore(options());
  });
  after(async () => {
    store.close();
    await deleteSecret('secret', name);
    await deleteSecret('kv1', name);
  });

  it('reads a field from a KV v2 mount through AppRole', async () => {
    assert.equal(await store.resolveRef(`secretstore:secret/${name}`, 'dsn'), 'postgres://v2');
  });

  it('reads a field from a KV v1 mount, detecting the version by itself', async () => {
    assert.equal(await store.resolveRef(`secretstore:kv1/${name}`, 'dsn'), 'postgres://v1');
  });

  it('says which field is missing and how to add it', async () => {
    await assert.rejects(
      store.resolveRef(`secretstore:secret/${name}`, 'nope'),
      (err: SecretStoreError) =>
        err.kind === 'missing_field' && err.message.includes(`secret/${name} has no field "nope"`),
    );
  });

  it('reports a path with nothing at it', async () => {
    await assert.rejects(
      store.resolveRef('secretstore:secret/keeper/does-not-exist', 'dsn'),
      (err: SecretStoreError) => err.kind === 'not_found' || err.kind === 'denied',
    );
  });

  it('is denied paths outside its policy', async () => {
    await assert.rejects(
      store.resolveRef('secretstore:secret/other-team/db', 'dsn'),
      (err: SecretStoreError) => err.kind === 'denied' && /AppRole policy/.test(err.message),
    );
  });

  it('reports an unreachable store with the address and the fix', async () => {
    await assert.rejects(
      connectSecretStore(options({ addr: 'http://127.0.0.1:1' })),
      (err: SecretStoreError) =>
        err.kind === 'unreachable' &&
        err.message.includes('http://127.0.0.1:1') &&
        /fix secretstore\.addr/.test(err.message),
    );
  });

  it('refuses a wrong secret_id without echoing it', async () => {
    const bogus = `${stackFile('approle-secret-id')}.bogus-${process.pid}`;
    require('node:fs').writeFileSync(bogus, 'not-the-secret-id-xyz', { mode: 0o400 });
    try {
      await assert.rejects(
        connectSecretStore(options({ auth: { method: 'approle', role_id: 'keeper', secret_id_file: bogus } })),
        (err: SecretStoreError) => err.kind === 'login_failed' && !err.message.includes('not-the-secret-id-xyz'),
      );
    } finally {
      require('node:fs').rmSync(bogus);
    }
  });

  it('refuses a secret_id file its group or others may read, naming the key, the mode and the fix; at 0400 the same file logs in', async () => {
    const secretId = fs.readFileSync(stackFile('approle-secret-id'), 'utf8').trim();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'secret-id-mode-'));
    const file = path.join(dir, 'approle-secret-id');
    try {
      fs.writeFileSync(file, `${secretId}\n`, { mode: 0o400 });
      for (const mode of [0o440, 0o444, 0o600]) {
        fs.chmodSync(file, mode);
        await assert.rejects(
          connectSecretStore(options({ auth: { method: 'approle', role_id: 'keeper', secret_id_file: file } })),
          (err: SecretStoreError) =>
            err.kind === 'refused' &&
            !err.message.includes(secretId) &&
            err.message.includes(`secretstore.auth.secret_id_file ${file} has mode 0${mode.toString(8)}`) &&
            err.message.includes(`chmod 0400 ${file}`),
        );
      }
      fs.chmodSync(file, 0o400);
      const ok = await connectSecretStore(
        options({ auth: { method: 'approle', role_id: 'keeper', secret_id_file: file } }),
      );
      ok.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps a cached value through a store outage when asked to', async () => {
    const ref = `secretstore:secret/${name}`;
    await store.resolveRef(ref, 'password');
    const offline = new SecretStore(options({ addr: 'http://127.0.0.1:1' }));
    (offline as any).cache = (store as any).cache;
    assert.equal(await offline.resolveRef(ref, 'password', { useCache: true }), 'pw2');
  });

  it('holds a renewable AppRole token and renews it', async () => {
    const before = await store.tokenTtl();
    assert.ok(before > 0 && before <= 3600, `ttl ${before}`);
    await (store as any).renew(true);
    const after = await store.tokenTtl();
    assert.ok(after >= before - 1, `renewed ttl ${after} >= ${before}`);
  });
});
