import assert from 'node:assert/strict';
import { FailureRateLimit, sourceOf } from './rate-limit';

describe('hub/rate-limit', () => {
  it('refuses a source after N failures until its window ends; other sources are unaffected', () => {
    let now = 1000;
    const rl = new FailureRateLimit({ failures: 3, windowMs: 60_000, now: () => now });
    for (let i = 0; i < 3; i++) {
      assert.equal(rl.retryAfterMs('10.0.0.1'), 0);
      rl.recordFailure('10.0.0.1');
    }
    assert.equal(rl.retryAfterMs('10.0.0.1'), 60_000);
    assert.equal(rl.retryAfterMs('10.0.0.2'), 0);
    now += 59_000;
    assert.equal(rl.retryAfterMs('10.0.0.1'), 1000);
    now += 1000;
    assert.equal(rl.retryAfterMs('10.0.0.1'), 0);
  });

  it('stays bounded under many sources', () => {
    const rl = new FailureRateLimit({ failures: 1, windowMs: 60_000, maxSources: 10 });
    for (let i = 0; i < 100; i++) rl.recordFailure(`10.0.${i}.1`);
    assert.ok((rl as any).bySource.size <= 10);
  });

  it('reads the address out of gRPC peer strings', () => {
    assert.equal(sourceOf('ipv4:127.0.0.1:5555'), '127.0.0.1');
    assert.equal(sourceOf('ipv6:[::1]:5555'), '::1');
    assert.equal(sourceOf('10.1.2.3:80'), '10.1.2.3');
  });
});
