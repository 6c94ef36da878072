import assert from 'node:assert/strict';
import { floors, judge, slope, type Point } from './analyse';

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
    assert.ok(v.ok, JSON.stringify(v));
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
    assert.equal(v.ok, false);
    assert.ok(v.slope_per_1000_runs! > 8e6 && v.slope_per_1000_runs! < 12e6, JSON.stringify(v));
  });

  it('fails a series with too few samples to judge', () => {
    assert.equal(judge('fds', 'fds', [{ runs: 900, value: 30 }], 1000, 10).ok, false);
  });
});
