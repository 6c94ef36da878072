import assert from 'node:assert/strict';
import { locateWaiting } from './locate-wait';

describe('locateWaiting: re-routing waits for souls that reconnect after a keeper restart', () => {
  it('finds a soul that appears on a keeper while it waits, and keeps those already found', async () => {
    let calls = 0;
    const asked: string[][] = [];
    const kids = await locateWaiting(
      async (sids) => {
        asked.push(sids);
        calls++;
        return sids.map((s) => (s === 'a' ? 'k1' : calls >= 3 ? 'k2' : null));
      },
      ['a', 'b'],
      5_000,
    );
    assert.deepEqual(kids, ['k1', 'k2']);
    assert.deepEqual(asked[1], ['b'], 'only the missing soul is asked for again');
  });

  it('gives up after waitMs and leaves a soul that never appears unlocated; without a wait it asks once', async () => {
    let calls = 0;
    const never = async (sids: string[]) => {
      calls++;
      return sids.map(() => null);
    };
    assert.deepEqual(await locateWaiting(never, ['x'], 0), [null]);
    assert.equal(calls, 1);
    assert.deepEqual(await locateWaiting(never, ['x'], 600), [null]);
    assert.ok(calls >= 3, `asked again while waiting (${calls} calls)`);
  });
});
