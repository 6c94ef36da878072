import assert from 'node:assert/strict';
import { AcceptRate, retryAfterValue } from './accept-rate';

const souls = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `s${from + i}`);

describe('hub/accept-rate', () => {
  it('admits a burst at once, then refuses with waits spaced one interval apart', () => {
    const ar = new AcceptRate({ perSecond: 10, burst: 3, now: () => 10_000 });
    assert.deepEqual(
      souls(3).map((s) => ar.take(s)),
      [0, 0, 0],
    );
    // Five souls refused at the same instant are given five different slots, 100 ms apart.
    assert.deepEqual(
      souls(5, 3).map((s) => ar.take(s)),
      [100, 200, 300, 400, 500],
    );
  });

  it('a soul back at or after its slot is admitted even if others took every token meanwhile', () => {
    let now = 0;
    const ar = new AcceptRate({ perSecond: 10, burst: 1, now: () => now });
    assert.equal(ar.take('first'), 0);
    assert.deepEqual([ar.take('a'), ar.take('b'), ar.take('c')], [100, 200, 300]);
    now = 150;
    assert.equal(ar.take('a'), 0, 'a, late by 50 ms, keeps its slot');
    assert.equal(ar.take('newcomer'), 250, 'a newcomer queues behind the reservations');
    assert.equal(ar.take('c'), 150, 'c, early, is told the rest of its wait');
    now = 1000;
    assert.deepEqual([ar.take('b'), ar.take('c'), ar.take('newcomer')], [0, 0, 0]);
  });

  it('refills up to the burst only', () => {
    let now = 0;
    const ar = new AcceptRate({ perSecond: 2, burst: 2, now: () => now });
    ar.take('a');
    ar.take('b');
    assert.equal(ar.take('c'), 500);
    now = 60_000; // a quiet minute: the bucket is full (2), not 120
    assert.deepEqual([ar.take('d'), ar.take('e')], [0, 0]);
    assert.equal(ar.take('f'), 500);
  });

  it('drops a reservation not claimed within the grace', () => {
    let now = 0;
    const ar = new AcceptRate({ perSecond: 1, burst: 1, graceMs: 5000, now: () => now });
    ar.take('a');
    assert.equal(ar.take('gone'), 1000);
    now = 7000;
    ar.take('x'); // sweeps
    now = 9000;
    assert.equal(ar.take('gone'), 0, 'admitted on a fresh token, not on the dropped slot');
    assert.equal(ar.take('y'), 1000, 'that took the token: the next soul waits');
  });

  it('never promises a slot further out than maxWait', () => {
    const ar = new AcceptRate({ perSecond: 1, burst: 1, maxWaitMs: 2500, now: () => 0 });
    ar.take('a');
    assert.deepEqual(
      ['b', 'c', 'd', 'e'].map((s) => ar.take(s)),
      [1000, 2000, 2500, 2500],
    );
  });

  it('writes retry-after in seconds with millisecond precision', () => {
    assert.equal(retryAfterValue(1250), '1.25');
    assert.equal(retryAfterValue(0.4), '0.001');
    assert.equal(retryAfterValue(30_000), '30');
  });
});
