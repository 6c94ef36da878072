import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import { heapAfterFullCollection, watchFullCollections } from './heap-after-gc';

// A full collection on demand, as `--expose-gc` gives it, without starting the runner with the flag.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const settle = () => new Promise((r) => setTimeout(r, 50));

describe('the heap a full collection leaves', () => {
  it('is read after each mark-sweep: garbage does not count, what is kept does', async () => {
    watchFullCollections();
    gc();
    await settle();
    const base = heapAfterFullCollection();
    assert.ok(base, 'a full collection was seen');
    // 20 MB of garbage: gone after the next full collection.
    let junk: number[][] | null = Array.from({ length: 200 }, () => new Array(12_500).fill(1.5));
    assert.ok(junk.length === 200);
    junk = null;
    gc();
    await settle();
    const after = heapAfterFullCollection()!;
    assert.ok(after.count > base.count, 'the second collection was seen');
    assert.ok(after.bytes < base.bytes + 5 * 2 ** 20, `garbage counted: ${base.bytes} -> ${after.bytes}`);
    // 20 MB kept: counted.
    const kept = Array.from({ length: 200 }, () => new Array(12_500).fill(2.5));
    gc();
    await settle();
    const held = heapAfterFullCollection()!;
    assert.ok(held.bytes > after.bytes + 15 * 2 ** 20, `kept memory missing: ${after.bytes} -> ${held.bytes}`);
    assert.equal(kept.length, 200);
  });
});
