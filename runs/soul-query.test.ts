import assert from 'node:assert/strict';
import type { SoulRecord } from '../db/repos/souls';
import { factAt } from './soul-query';

const soul = (soulprint: Record<string, unknown> | null) => ({ soulprint, covens: ['web'] }) as unknown as SoulRecord;

describe('factAt: a dotted path into a soul’s facts', () => {
  const s = soul({ os_release: { id: 'debian' }, addresses: ['10.0.0.5'] });

  it('reads nested keys, list items and the covens', () => {
    assert.equal(factAt(s, 'os_release.id'), 'debian');
    assert.equal(factAt(s, 'addresses.0'), '10.0.0.5');
    assert.deepEqual(factAt(s, 'covens'), ['web']);
  });

  it('is absent for a missing key, a path through a scalar, and a soul without facts', () => {
    assert.equal(factAt(s, 'kernel'), undefined);
    assert.equal(factAt(s, 'os_release.id.more'), undefined);
    assert.equal(factAt(soul(null), 'os_release'), undefined);
  });

  it('is absent for what objects inherit: a fact query never answers with a prototype’s function', () => {
    for (const path of ['constructor', '__proto__', 'toString', 'os_release.constructor', 'addresses.length.toFixed'])
      assert.equal(factAt(s, path), undefined, path);
  });
});
