import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SoulError } from './errors';
import { identityPresent, loadIdentity, storeIdentity } from './identity';

describe('agent/identity', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'soul-seed-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('stores key.pem with mode 0600 and refuses to overwrite any part of an identity', () => {
    const seed = path.join(dir, 'seed');
    storeIdentity(seed, { keyPem: 'K', certPem: 'C', chainPem: 'H' });
    assert.equal(fs.statSync(path.join(seed, 'key.pem')).mode & 0o777, 0o600);
    assert.equal(fs.statSync(seed).mode & 0o777, 0o700);
    assert.ok(identityPresent(seed));
    assert.throws(
      () => storeIdentity(seed, { keyPem: 'K2', certPem: 'C2', chainPem: 'H2' }),
      (err: unknown) => {
        assert.ok(err instanceof SoulError);
        assert.equal(err.message, `an identity already exists under ${seed}`);
        assert.match(err.fix, /only if you mean to re-enroll/);
        return true;
      },
    );
    assert.equal(fs.readFileSync(path.join(seed, 'key.pem'), 'utf8'), 'K');
  });

  it('counts a lone certificate as an identity', () => {
    fs.writeFileSync(path.join(dir, 'cert.pem'), 'C');
    assert.ok(identityPresent(dir));
  });

  it('tells soul run to onboard first when there is none', () => {
    assert.throws(() => loadIdentity(path.join(dir, 'nothing')), /no identity under .* \(ENOENT\)/);
  });
});
