import assert from 'node:assert/strict';
import { AcceptRate, retryAfterValue } from './accept-rate';

describe('hub/accept-rate', () => {
  it('admits a burst at once, then refuses with waits spaced one interval apart', () => {
    const now = 10_000;
    const ar = new AcceptRate({ perSecond: 10, burst: 3, now: () => now });
    assert.deepEqual([1, 2, 3].map(() => ar.take()), [0, 0, 0]);
    // Five souls refused at the same instant are given five different slots, 100 ms apart.
    assert.deepEqual([1, 2, 3, 4, 5].map(() => ar.take()), [100, 200, 300, 400, 500]);
  });

  it('a soul that comes back at its slot is admitted', () => {
    let now = 0;
    const ar = new AcceptRate({ perSecond: 10, burst: 1, now: () => now });
    assert.equal(ar.take(), 0);
    const waits = [ar.take(), ar.take(), ar.take()];
    assert.deepEqual(waits, [100, 200, 300]);
    for (const w of waits) {
      now = w;
      assert.equal(ar.take(), 0, `admitted at ${w} ms`);
    }
  });

  it('refills up to the burst only, and forgets slots once they have passed', () => {
    let now = 0;
    const ar = new AcceptRate({ perSecond: 2, burst: 2, now: () => now });
    ar.take(); ar.take();
    assert.equal(ar.take(), 500);
    now = 60_000; // a quiet minute: the bucket is full (2), not 120
    assert.deepEqual([ar.take(), ar.take()], [0, 0]);
    assert.equal(ar.take(), 500, 'the next slot counts from now, not from the old promise');
  });

  it('never tells a soul to wait longer than maxWait', () => {
    const ar = new AcceptRate({ perSecond: 1, burst: 1, maxWaitMs: 2500, now: () => 0 });
    ar.take();
    assert.deepEqual([1, 2, 3, 4].map(() => ar.take()), [1000, 2000, 2500, 2500]);
  });

  it('writes retry-after in seconds with millisecond precision', () => {
    assert.equal(retryAfterValue(1250), '1.25');
    assert.equal(retryAfterValue(0.4), '0.001');
    assert.equal(retryAfterValue(30_000), '30');
  });
});
