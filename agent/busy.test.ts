import assert from 'node:assert/strict';
import { busyDelay, busyRetryAfterMs } from './busy';
import { GrpcStatus } from './grpc-stream';

/** The trailers' fields other than the status, as agent/grpc-stream.ts gives them. */
function md(v?: string): Record<string, string> {
  return v === undefined ? { 'grpc-message': 'busy' } : { 'grpc-message': 'busy', 'retry-after': v };
}

describe('agent/busy', () => {
  it('reads retry-after (seconds, fractional) from a RESOURCE_EXHAUSTED refusal only', () => {
    assert.equal(busyRetryAfterMs(GrpcStatus.RESOURCE_EXHAUSTED, md('1.25')), 1250);
    assert.equal(busyRetryAfterMs(GrpcStatus.RESOURCE_EXHAUSTED, md('30')), 30_000);
    assert.equal(busyRetryAfterMs(GrpcStatus.UNAVAILABLE, md('1')), undefined);
    assert.equal(busyRetryAfterMs(GrpcStatus.RESOURCE_EXHAUSTED, md()), undefined);
    assert.equal(busyRetryAfterMs(GrpcStatus.RESOURCE_EXHAUSTED, md('soon')), undefined);
    assert.equal(busyRetryAfterMs(GrpcStatus.RESOURCE_EXHAUSTED, md('-1')), undefined);
    assert.equal(busyRetryAfterMs(GrpcStatus.RESOURCE_EXHAUSTED, undefined), undefined);
  });

  it('waits at least the hint, jittered by at most a fifth of it and 2 s', () => {
    assert.equal(
      busyDelay(1000, () => 0),
      1000,
    );
    assert.equal(
      busyDelay(1000, () => 1),
      1200,
    );
    assert.equal(
      busyDelay(60_000, () => 1),
      62_000,
    );
    const spread = new Set(Array.from({ length: 50 }, () => busyDelay(5000)));
    assert.ok(spread.size > 10, 'souls given the same slot come back apart');
  });
});
