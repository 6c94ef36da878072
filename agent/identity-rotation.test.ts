// The staged identity of a rotation on disk: tried first, promoted whole, discarded whole, and a
// half-written one never used; an expired identity recognised (soul init replaces it).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  discardStagedIdentity,
  identityExpired,
  loadIdentity,
  loadStagedIdentity,
  promoteStagedIdentity,
  removeIdentity,
  stageIdentity,
  storeIdentity,
} from './identity';
import { rotationTime } from './rotation';

/** A self-signed EC certificate and its key, CN = `cn`, valid for `days`. */
function selfSigned(dir: string, cn: string, days: number): { keyPem: string; certPem: string; chainPem: string } {
  const key = path.join(dir, `${cn}.key`);
  const cert = path.join(dir, `${cn}.crt`);
  execFileSync('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key]);
  execFileSync('openssl', [
    'req',
    '-x509',
    '-new',
    '-key',
    key,
    '-subj',
    `/CN=${cn}`,
    '-out',
    cert,
    '-days',
    String(days),
  ]);
  const parts = {
    keyPem: fs.readFileSync(key, 'utf8'),
    certPem: fs.readFileSync(cert, 'utf8'),
    chainPem: fs.readFileSync(cert, 'utf8'),
  };
  fs.rmSync(key);
  fs.rmSync(cert);
  return parts;
}

describe('agent/identity: the staged identity of a rotation', () => {
  let dir: string;
  let seed: string;
  let first: ReturnType<typeof selfSigned>;
  let second: ReturnType<typeof selfSigned>;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'soul-rotate-'));
    first = selfSigned(dir, 'web-1.keeper.test', 30);
    second = selfSigned(dir, 'web-1.keeper.test', 30);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  beforeEach(() => {
    seed = path.join(dir, `seed-${Math.random().toString(16).slice(2)}`);
    storeIdentity(seed, first);
  });

  it('stages beside the main identity, which stays until promotion', () => {
    assert.equal(loadStagedIdentity(seed), undefined);
    stageIdentity(seed, second);
    assert.equal(loadStagedIdentity(seed)!.certPem, second.certPem);
    assert.equal(loadIdentity(seed).certPem, first.certPem);
    assert.equal(fs.statSync(path.join(seed, 'next', 'key.pem')).mode & 0o777, 0o600);
  });

  it('promotes the staged identity whole and removes it', () => {
    stageIdentity(seed, second);
    promoteStagedIdentity(seed);
    const now = loadIdentity(seed);
    assert.equal(now.certPem, second.certPem);
    assert.equal(now.keyPem, second.keyPem);
    assert.equal(fs.existsSync(path.join(seed, 'next')), false);
    assert.equal(fs.statSync(path.join(seed, 'key.pem')).mode & 0o777, 0o600);
  });

  it('never uses a half-written staged identity (certificate without its key)', () => {
    stageIdentity(seed, second);
    fs.writeFileSync(path.join(seed, 'next', 'key.pem'), first.keyPem);
    assert.equal(loadStagedIdentity(seed), undefined);
    promoteStagedIdentity(seed);
    assert.equal(loadIdentity(seed).certPem, first.certPem, 'the main identity is untouched');
  });

  it('discards the staged identity', () => {
    stageIdentity(seed, second);
    discardStagedIdentity(seed);
    assert.equal(loadStagedIdentity(seed), undefined);
    assert.equal(loadIdentity(seed).certPem, first.certPem);
  });

  it('recognises an identity whose certificate expired, unless a valid one is staged', () => {
    // A year from now, the 30-day certificates have expired; the 10-year one has not.
    const later = Date.now() + 365 * 86_400_000;
    assert.equal(identityExpired(seed), false);
    assert.equal(identityExpired(seed, later), true);
    const old = seed;
    stageIdentity(old, selfSigned(dir, 'web-1.keeper.test', 3650));
    assert.equal(identityExpired(old, later), false);
    removeIdentity(old);
    assert.deepEqual(fs.readdirSync(old), []);
  });

  it('asks at two thirds of the lifetime, plus at most a thirtieth of it', () => {
    const from = new Date('2026-01-01T00:00:00Z');
    const to = new Date(from.getTime() + 30 * 86_400_000);
    assert.equal(
      rotationTime(from, to, () => 0),
      from.getTime() + 20 * 86_400_000,
    );
    assert.equal(
      rotationTime(from, to, () => 1),
      from.getTime() + 21 * 86_400_000,
    );
  });
});
