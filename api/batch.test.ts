import assert from 'node:assert/strict';
import { VerifiedTokens } from './auth';
import { TickBatcher } from './batch';

describe('api/batch: one statement for the point reads of one event-loop turn', () => {
  it('answers the reads of one turn with one fetch, each with its own key, and never joins a batch already sent', async () => {
    const fetched: string[][] = [];
    const b = new TickBatcher<string, number>(async (keys) => {
      fetched.push(keys);
      return new Map(keys.filter((k) => k !== 'gone').map((k) => [k, k.length]));
    });
    const first = await Promise.all([b.get('a'), b.get('bb'), b.get('a'), b.get('gone')]);
    assert.deepEqual(first, [1, 2, 1, undefined]);
    assert.deepEqual(fetched, [['a', 'bb', 'gone']]);
    // A read issued while a fetch is in flight goes into the next statement.
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const slow = new TickBatcher<string, string>(async (keys) => {
      fetched.push(keys);
      await gate;
      return new Map(keys.map((k) => [k, k]));
    });
    const early = slow.get('x');
    await new Promise((r) => setImmediate(r));
    const late = slow.get('x');
    release();
    assert.deepEqual(await Promise.all([early, late]), ['x', 'x']);
    assert.deepEqual(fetched.slice(1), [['x'], ['x']]);
  });

  it('rejects every read of a batch whose fetch fails', async () => {
    const b = new TickBatcher<string, number>(async () => {
      throw new Error('db down');
    });
    const results = await Promise.allSettled([b.get('a'), b.get('b')]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
  });
});

describe('api/auth: verified-token cache', () => {
  it('answers a token only until its expiry and stays bounded', () => {
    const c = new VerifiedTokens(2);
    c.set('t1', 'alice', 1000);
    assert.equal(c.get('t1', 999), 'alice');
    assert.equal(c.get('t1', 1000), undefined);
    assert.equal(c.get('t1', 0), undefined); // an expired entry is dropped
    c.set('a', 'x', 5000);
    c.set('b', 'y', 5000);
    c.set('c', 'z', 5000);
    assert.equal(c.size, 2);
    assert.equal(c.get('a', 0), undefined);
    assert.equal(c.get('c', 0), 'z');
  });
});
