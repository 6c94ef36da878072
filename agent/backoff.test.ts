import assert from 'node:assert/strict';
import { Backoff } from './backoff';

describe('agent/backoff', () => {
  it('doubles up to the cap, each delay in the upper half of its step', () => {
    const low = new Backoff({ initialMs: 100, maxMs: 1000, random: () => 0 });
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6].map(() => low.next()),
      [50, 100, 200, 400, 500, 500],
    );
    const high = new Backoff({ initialMs: 100, maxMs: 1000, random: () => 1 });
    assert.deepEqual(
      [1, 2, 3, 4, 5].map(() => high.next()),
      [100, 200, 400, 800, 1000],
    );
  });

  it('starts over after reset', () => {
    const b = new Backoff({ initialMs: 100, random: () => 1 });
    b.next();
    b.next();
    b.next();
    b.reset();
    assert.equal(b.next(), 100);
  });

  it('spreads souls apart (jitter)', () => {
    const delays = new Set(Array.from({ length: 50 }, () => new Backoff({ initialMs: 1000 }).next()));
    assert.ok(delays.size > 10);
  });
});
