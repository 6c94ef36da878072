// secretstore.ca_file (issue 37 row 9): a store served over https with a certificate a private CA
// signed. The stack's store sits behind a real TLS front (the stack PKI's localhost leaf); the
// keeper's client logs in and reads through it only when ca_file names that CA, and without it the
// error names the key to set.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { connectSecretStore } from '../../secrets/client';
import type { SecretStoreError } from '../../secrets/errors';
import { loadConfig } from '../../platform/config/load';
import { deleteSecret, putSecret } from '../support/secretstore';
import { repoRoot } from '../support/repo';
import { stackEnv, stackFile } from '../support/stack-env';

describe('secretstore.ca_file: an https store signed by a private CA (real store behind TLS)', () => {
  const name = `keeper/t-${randomBytes(4).toString('hex')}`;
  let front: https.Server;
  let addr: string;

  before(async () => {
    await putSecret('secret', name, { password: 'through-tls' });
    const upstream = new URL(stackEnv().SECRETSTORE_ADDR);
    front = https.createServer(
      { cert: fs.readFileSync(stackFile('tls', 'keeper.crt')), key: fs.readFileSync(stackFile('tls', 'keeper.key')) },
      (req, res) => {
        const out = http.request(
          { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers },
          (up) => {
            res.writeHead(up.statusCode ?? 502, up.headers);
            up.pipe(res);
          },
        );
        out.on('error', () => res.destroy());
        req.pipe(out);
      },
    );
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    addr = `https://localhost:${(front.address() as AddressInfo).port}`;
  });
  after(async () => {
    front?.close();
    await deleteSecret('secret', name);
  });

  const options = (over: Record<string, unknown>) => ({
    addr,
    auth: { method: 'approle' as const, role_id: 'keeper', secret_id_file: stackFile('approle-secret-id') },
    pki_mount: 'pki',
    pki_role: 'soul',
    ...over,
  });

  it('with ca_file the keeper logs in over https and reads a secret', async () => {
    const store = await connectSecretStore(options({ ca_file: stackFile('tls', 'ca.pem') }));
    try {
      assert.equal(await store.resolveRef(`secretstore:secret/${name}`, 'password'), 'through-tls');
    } finally {
      store.close();
    }
  });

  it('without it the login is refused for the certificate, and the error names secretstore.ca_file', async () => {
    await assert.rejects(connectSecretStore(options({})), (err: SecretStoreError) => {
      assert.match(err.message, /presented a certificate this keeper does not trust \([A-Z_]+\)/);
      assert.match(err.message, /set secretstore\.ca_file/);
      return true;
    });
  });

  it('a ca_file that does not exist is named with the fix, before any request', async () => {
    await assert.rejects(
      connectSecretStore(options({ ca_file: '/nonexistent/store-ca.pem' })),
      /secretstore\.ca_file: \/nonexistent\/store-ca\.pem cannot be read \(ENOENT\); fix: install the store's CA there/,
    );
  });

  it('the shipped keeper.yml has the key to uncomment, and a relative ca_file is resolved against its folder', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-file-'));
    try {
      const file = path.join(dir, 'keeper.yml');
      // The shipped keeper.yml with its ca_file line uncommented, as the guide says to.
      const shipped = fs.readFileSync(path.join(repoRoot(), 'packaging', 'keeper', 'keeper.yml'), 'utf8');
      assert.match(shipped, /^  # ca_file: tls\/store-ca\.pem$/m);
      fs.writeFileSync(file, shipped.replace('  # ca_file: tls/store-ca.pem', '  ca_file: tls/store-ca.pem'));
      assert.equal(loadConfig(file).secretstore.ca_file, path.join(dir, 'tls', 'store-ca.pem'));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
