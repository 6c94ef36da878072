import assert from 'node:assert/strict';
import { Backoff } from './backoff';
import { delayAfterLoss, QUICK_JITTER_MS, STABLE_MS } from './reconnect';

describe('agent/reconnect: the wait after a lost stream', () => {
  const fresh = () => new Backoff({ initialMs: 500, maxMs: 30_000, random: () => 1 });

  it('reconnects at once (jitter at most 0.1 s) when a healthy stream is lost, as when its keeper is killed', () => {
    const b = fresh();
    const delays = [0, 0.5, 0.999].map((r) => delayAfterLoss({ durationMs: 60_000 }, b, () => r));
    for (const d of delays) assert.ok(d >= 1 && d <= QUICK_JITTER_MS, `${d} ms`);
    assert.ok(new Set(delays).size > 1, 'souls are spread, not all at the same instant');
  });

  it('does not carry an earlier backoff into that reconnect: a stable session resets it', () => {
    const b = fresh();
    for (let i = 0; i < 5; i++) b.next(); // a bad start: the backoff had grown to 8 s
    assert.ok(delayAfterLoss({ durationMs: STABLE_MS }, b, () => 0.999) <= QUICK_JITTER_MS);
    // The next failure (say every endpoint refused) starts the backoff from its first step again.
    assert.equal(b.next(), 500);
  });

  it('backs off, growing, when streams keep ending young (a keeper that accepts and drops)', () => {
    const b = fresh();
    const delays = [1, 2, 3, 4].map(() => delayAfterLoss({ durationMs: 2_000 }, b, () => 0.5));
    assert.deepEqual(delays, [500, 1000, 2000, 4000]);
  });

  it('leaves a keeper that says goodbye{shutdown} within half a second, whatever the session lasted', () => {
    const b = fresh();
    for (const ms of [100, 60_000]) {
      const d = delayAfterLoss({ durationMs: ms, goodbye: 'shutdown' }, b, () => 1);
      assert.ok(d <= 500, `${d} ms`);
    }
  });
});
