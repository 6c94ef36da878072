import assert from 'node:assert/strict';
import {
  collectionsInSecondHalf,
  floors,
  judge,
  judgeAfterFullCollections,
  slope,
  type GcPoint,
  type Point,
} from './analyse';

// A heap that swings between collections: a sawtooth over a floor.
const sawtooth = (runs: number, floorAt: (r: number) => number): Point[] =>
  Array.from({ length: runs / 5 + 1 }, (_, i) => ({ runs: i * 5, value: floorAt(i * 5) + ((i * 7) % 10) * 1e6 }));

describe('soak analysis', () => {
  it('computes a least-squares slope and floors per window', () => {
    assert.equal(
      slope([
        { runs: 0, value: 1 },
        { runs: 10, value: 21 },
      ]),
      2,
    );
    assert.equal(slope([{ runs: 3, value: 1 }]), null);
    assert.deepEqual(
      floors(
        [
          { runs: 0, value: 5 },
          { runs: 4, value: 3 },
          { runs: 6, value: 9 },
          { runs: 10, value: 8 },
        ],
        10,
        2,
      ),
      [
        { runs: 2.5, value: 3 },
        { runs: 7.5, value: 8 },
      ],
    );
  });

  it('passes a heap that swings but whose floor is flat after start-up', () => {
    const v = judge(
      'heap',
      'bytes',
      sawtooth(1000, (r) => (r < 300 ? 40e6 + r * 1e5 : 70e6)),
      1000,
      2e6,
    );
    assert.equal(v.outcome, 'pass', JSON.stringify(v));
    assert.equal(v.slope_per_1000_runs, 0);
  });

  it('fails a floor that keeps rising over the second half, however noisy the samples', () => {
    const v = judge(
      'heap',
      'bytes',
      sawtooth(1000, (r) => 40e6 + r * 10e3),
      1000,
      2e6,
    ); // 10 MB per 1,000 runs
    assert.equal(v.outcome, 'fail');
    assert.ok(v.slope_per_1000_runs! > 8e6 && v.slope_per_1000_runs! < 12e6, JSON.stringify(v));
  });

  it('fails a series with too few samples to judge', () => {
    assert.equal(judge('fds', 'fds', [{ runs: 900, value: 30 }], 1000, 10).outcome, 'fail');
  });

  describe('the live heap, judged over full collections', () => {
    // A sample every 50 runs of 1,000; `gcAt` says at which samples a full collection came before it
    // and what it left; in between the gauge keeps the last figure.
    const samples = (gcAt: Record<number, number>, restartAt?: number): GcPoint[] => {
      let count = 0;
      let after = NaN;
      return Array.from({ length: 21 }, (_, i) => {
        const runs = i * 50;
        if (runs === restartAt) {
          count = 0;
          after = NaN;
        }
        if (gcAt[runs] !== undefined) {
          count += 1;
          after = gcAt[runs]!;
        }
        return { runs, heap_after_gc_bytes: after, full_gcs: count };
      });
    };

    it('is not judged, neither passing nor failing, with fewer than two collections in the second half', () => {
      const none = judgeAfterFullCollections('keeper heap', samples({ 100: 90e6 }), 1000, 4e6);
      assert.equal(none.outcome, 'not judged');
      assert.equal(none.note, 'not judged: 0 full collections in the second half');
      assert.equal(none.slope_per_1000_runs, null);
      const one = judgeAfterFullCollections('keeper heap', samples({ 100: 90e6, 700: 200e6 }), 1000, 4e6);
      assert.equal(one.outcome, 'not judged');
      assert.equal(one.note, 'not judged: 1 full collection in the second half');
    });

    it('passes a live heap that stays put, however high heap used climbs between collections', () => {
      const v = judgeAfterFullCollections(
        'soul heap',
        samples({ 100: 8e6, 550: 8.1e6, 700: 7.9e6, 850: 8e6, 1000: 8e6 }),
        1000,
        2e6,
      );
      assert.equal(v.outcome, 'pass', JSON.stringify(v));
      assert.equal(v.note, '4 full collections in the second half, 4 samples after one');
      assert.ok(Math.abs(v.slope_per_1000_runs!) < 0.5e6, JSON.stringify(v));
    });

    it('fails a live heap that grows from collection to collection', () => {
      // 10 KB kept per run: 10 MB per 1,000 runs.
      const v = judgeAfterFullCollections(
        'soul heap',
        samples({ 600: 14e6, 700: 15e6, 800: 16e6, 900: 17e6 }),
        1000,
        2e6,
      );
      assert.equal(v.outcome, 'fail');
      assert.equal(v.slope_per_1000_runs, 10e6);
    });

    it('counts a restarted process from zero and skips samples whose count could not be read', () => {
      const s = samples({ 100: 90e6, 300: 91e6, 600: 92e6, 800: 92e6 }, 550);
      s[15] = { ...s[15]!, full_gcs: NaN }; // runs 750
      const { count, points } = collectionsInSecondHalf(s, 1000);
      assert.equal(count, 2);
      assert.deepEqual(points, [
        { runs: 600, value: 92e6 },
        { runs: 800, value: 92e6 },
      ]);
    });
  });
});
