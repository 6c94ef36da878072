import assert from 'node:assert/strict';
import { parseDuration, formatDuration } from './duration';

describe('durations', () => {
  it('reads the Go-style forms the config uses', () => {
    assert.equal(parseDuration('24h'), 86_400_000);
    assert.equal(parseDuration('720h'), 2_592_000_000);
    assert.equal(parseDuration('1h30m'), 5_400_000);
    assert.equal(parseDuration('250ms'), 250);
    assert.equal(parseDuration('1.5s'), 1500);
  });

  it('refuses other forms with a message that shows the accepted ones', () => {
    for (const bad of ['24 hours', '10', 'h', '', '1d', '-5s']) {
      assert.throws(() => parseDuration(bad), /is not a duration; write it like 30s, 15m, 24h or 1h30m/);
    }
  });

  it('formats back to the largest whole unit', () => {
    assert.equal(formatDuration(86_400_000), '24h');
    assert.equal(formatDuration(90_000), '90s');
    assert.equal(formatDuration(5), '5ms');
  });
});
