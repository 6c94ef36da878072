import assert from 'node:assert/strict';
import { locateFirst, locateWaiting } from './locate-wait';

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

describe('locateFirst: a first routing waits only for souls connected moments ago', () => {
  it('waits for a recently connected soul until it reconnects; a soul long gone is asked for once and left unlocated', async () => {
    const asked: string[][] = [];
    let calls = 0;
    const kids = await locateFirst(
      async (sids) => {
        asked.push(sids);
        calls++;
        return sids.map((s) => (s === 'here' ? 'k1' : s === 'back' && calls >= 3 ? 'k2' : null));
      },
      async (missing) => new Set(missing.filter((s) => s === 'back')),
      ['here', 'back', 'gone'],
    );
    assert.deepEqual(kids, ['k1', 'k2', null]);
    assert.equal(asked.flat().filter((s) => s === 'gone').length, 1, 'the soul long gone was not waited for');
    assert.ok(
      asked.slice(1).every((a) => a.length === 1 && a[0] === 'back'),
      'only the recent soul was asked again',
    );
  });

  it('asks for nothing more when every soul is found, or none of the missing was connected recently', async () => {
    let recentAsked = 0;
    const recent = async () => {
      recentAsked++;
      return new Set<string>();
    };
    assert.deepEqual(await locateFirst(async (s) => s.map(() => 'k1'), recent, ['a']), ['k1']);
    assert.equal(recentAsked, 0);
    let calls = 0;
    const none = async (s: string[]) => {
      calls++;
      return s.map(() => null);
    };
    assert.deepEqual(await locateFirst(none, recent, ['a', 'b']), [null, null]);
    assert.deepEqual([calls, recentAsked], [1, 1]);
  });
});
