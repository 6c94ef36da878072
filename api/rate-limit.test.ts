import assert from 'node:assert/strict';
import { OperatorRateLimit } from './rate-limit';

describe('per-operator rate limit (token bucket)', () => {
  it('lets a burst through, then refuses with the seconds until the next token, per operator', () => {
    let now = 1_000_000;
    const limit = new OperatorRateLimit(2, 3, () => now);
    assert.deepEqual([limit.take('ann'), limit.take('ann'), limit.take('ann')], [0, 0, 0]);
    assert.equal(limit.take('ann'), 1, 'the fourth within the same instant waits one second');
    assert.equal(limit.take('bob'), 0, 'another operator has a bucket of its own');
    now += 500;
    assert.equal(limit.take('ann'), 0, 'half a second refills one token at 2/s');
    assert.equal(limit.take('ann'), 1);
    now += 10_000;
    assert.deepEqual(
      [0, 1, 2].map(() => limit.take('ann')),
      [0, 0, 0],
      'refills up to the burst, not beyond',
    );
    assert.equal(limit.take('ann'), 1);
  });

  it('rounds a slow refill up to whole seconds for Retry-After', () => {
    let now = 0;
    const limit = new OperatorRateLimit(0.1, 1, () => now);
    assert.equal(limit.take('ann'), 0);
    assert.equal(limit.take('ann'), 10);
    now += 5_000;
    assert.equal(limit.take('ann'), 5);
  });
});
