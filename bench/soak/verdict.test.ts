import assert from 'node:assert/strict';
import type { Sample } from './sample';
import { LONG_SOAK } from './soak-options';
import { summaryLines, verdicts } from './verdict';

const MB = 2 ** 20;

// A 1,000-run soak sampled every 50 runs: a keeper and one soul with flat RSS and fds, stores within
// their bounds; `soulGc` gives the soul's full-collection count and live heap at each sample.
function soak(soulGc: (runs: number) => { full_gcs: number; heap_after_gc_bytes: number }): Sample[] {
  return Array.from({ length: 21 }, (_, i) => {
    const runs = i * 50;
    return {
      at: '',
      runs,
      seconds: runs,
      load1: 1,
      keeper: {
        pid: 1,
        rss_bytes: 300 * MB,
        heap_used_bytes: 100 * MB,
        heap_after_gc_bytes: 90 * MB,
        full_gcs: i,
        fds: 50,
      },
      souls: [
        {
          sid: 'soak1',
          rss_bytes: 55 * MB,
          heap_used_bytes: 9 * MB,
          fds: 22,
          ledger_bytes: runs * 1000,
          ledger_journals: runs,
          ...soulGc(runs),
        },
      ],
      database: { total_bytes: runs * 10_000, tables: {} },
      operations: { runs, plans: 0, runs_by_drift_check: 0, plans_by_drift_check: 0 },
    };
  });
}

describe('the soak verdict per process', () => {
  it('passes the soak when a heap was not judged, and says so in that process’s summary line', () => {
    // The soul collected fully once, at start-up, and never again.
    const r = verdicts(
      LONG_SOAK,
      soak(() => ({ full_gcs: 1, heap_after_gc_bytes: 7 * MB })),
    );
    const heap = r.verdicts.find((v) => v.series === 'soul soak1 V8 heap after full collections')!;
    assert.equal(heap.outcome, 'not judged');
    assert.equal(r.ok, true);
    const lines = summaryLines(r.verdicts);
    assert.equal(
      lines.find((l) => l.startsWith('soul soak1: ')),
      'soul soak1: RSS pass +0.0 MB per 1,000 runs (limit 4.0 MB); heap after full GC not judged: 0 full collections in the second half; open fds pass +0 per 1,000 runs (limit 5)',
    );
    assert.match(
      lines.find((l) => l.startsWith('keeper: '))!,
      /heap after full GC pass \+0\.0 MB per 1,000 runs \(limit 4\.0 MB\), 10 full collections in the second half/,
    );
  });

  it('fails the soak on a judged heap that grows', () => {
    // A collection at every sample, each leaving 5 KB more per run (5 MB per 1,000 runs).
    const r = verdicts(
      LONG_SOAK,
      soak((runs) => ({ full_gcs: runs / 50, heap_after_gc_bytes: 7 * MB + runs * 5 * 1024 })),
    );
    const heap = r.verdicts.find((v) => v.series === 'soul soak1 V8 heap after full collections')!;
    assert.equal(heap.outcome, 'fail');
    assert.equal(r.ok, false);
    assert.match(summaryLines(r.verdicts).join('\n'), /soul soak1: .*heap after full GC fail \+4\.9 MB per 1,000 runs/);
  });
});
