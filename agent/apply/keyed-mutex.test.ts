import assert from 'node:assert/strict';
import { KeyedMutex } from './keyed-mutex';

describe('keyed mutex', () => {
  it('runs one holder per key at a time, in arrival order, and forgets idle keys', async () => {
    const m = new KeyedMutex();
    const log: string[] = [];
    const task = (key: string, name: string) =>
      m.run(key, async () => {
        log.push(`${name}+`);
        await new Promise((r) => setTimeout(r, 5));
        log.push(`${name}-`);
      });
    await Promise.all([task('a', 'a1'), task('a', 'a2'), task('b', 'b1')]);
    assert.deepEqual(
      log.filter((e) => e.startsWith('a')),
      ['a1+', 'a1-', 'a2+', 'a2-'],
    );
    assert.ok(log.indexOf('b1+') < log.indexOf('a1-'), 'another key is not blocked');
    assert.equal(m.size, 0);
  });

  it('releases the key when the holder fails', async () => {
    const m = new KeyedMutex();
    await assert.rejects(
      m.run('k', async () => {
        throw new Error('x');
      }),
      /x/,
    );
    assert.equal(await m.run('k', async () => 'next'), 'next');
  });
});
