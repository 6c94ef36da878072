import assert from 'node:assert/strict';
import { LruMap } from './lru';

describe('LruMap', () => {
  it('never holds more than max entries however many keys come', () => {
    const m = new LruMap<number, string>(100);
    for (let i = 0; i < 10_000; i++) {
      m.set(i, `v${i}`);
      assert.ok(m.size <= 100);
    }
    assert.equal(m.size, 100);
    assert.equal(m.get(9_999), 'v9999');
    assert.equal(m.get(9_899), undefined, 'the oldest were forgotten');
  });

  it('forgets the least recently used entry, not the oldest written', () => {
    const m = new LruMap<string, number>(2);
    m.set('a', 1).set('b', 2);
    assert.equal(m.get('a'), 1); // a is now the one used last
    m.set('c', 3);
    assert.equal(m.has('b'), false);
    assert.deepEqual([m.get('a'), m.get('c')], [1, 3]);
    m.set('a', 10); // rewriting a key does not grow the map
    assert.equal(m.size, 2);
    assert.equal(m.get('a'), 10);
  });

  it('refuses a bound that is not a positive integer', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) assert.throws(() => new LruMap(bad), /max >= 1/);
  });
});
