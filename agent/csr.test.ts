import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createCsr, generateKey, privateKeyPem } from './csr';

function openssl(args: string[], input: string): string {
  return execFileSync('openssl', args, { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
}

describe('agent/csr', () => {
  it('writes a PKCS#10 request that openssl verifies, with the SID as common name', () => {
    const key = generateKey();
    const csr = createCsr(key, 'soul-a.keeper.test');
    assert.match(csr, /^-----BEGIN CERTIFICATE REQUEST-----\n/);
    const text = openssl(['req', '-noout', '-verify', '-subject'], csr);
    assert.match(text, /subject=CN ?= ?soul-a\.keeper\.test/);
  });

  it('carries requested DNS names only when asked (used by tests to show the keeper ignores them)', () => {
    const key = generateKey();
    assert.doesNotMatch(
      openssl(['req', '-noout', '-text'], createCsr(key, 'a.keeper.test')),
      /Subject Alternative Name/,
    );
    const text = openssl(
      ['req', '-noout', '-text', '-verify'],
      createCsr(key, 'a.keeper.test', ['a.keeper.test', 'evil.keeper.test']),
    );
    assert.match(text, /DNS:a\.keeper\.test, DNS:evil\.keeper\.test/);
  });

  it('makes an EC P-256 private key exported as PKCS#8', () => {
    const pem = privateKeyPem(generateKey());
    assert.match(pem, /^-----BEGIN PRIVATE KEY-----/);
    assert.match(openssl(['pkey', '-noout', '-text'], pem), /prime256v1|P-256/);
  });

  it('refuses a non-EC key', () => {
    const { privateKey } = require('node:crypto').generateKeyPairSync('ed25519');
    assert.throws(() => createCsr(privateKey, 'a.keeper.test'), /EC private key/);
  });
});
