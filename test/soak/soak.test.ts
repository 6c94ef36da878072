// The short soak (issue 36): a keeper process, two real souls, 90 runs of two services with plans,
// drift checks with auto-repair, a host joining and leaving and a keeper restart, sampled every 3
// runs after a forced full collection. It fails when the RSS or fd floor or the live heap of the
// keeper or a soul grows over the second half beyond bench/soak/soak-options.ts' short limits, or a store (the souls' ledgers, the keeper's
// database) takes more bytes per unit of work than documented. bench/soak/run.ts is the long one.
import assert from 'node:assert/strict';
import { runSoak } from '../../bench/soak/soak';
import { SHORT_SOAK } from '../../bench/soak/soak-options';

describe('soak (short): footprints stay bounded under sustained runs', function () {
  this.timeout(15 * 60_000);

  it('keeps the memory and open files of the keeper and the souls flat, and the stores within their bytes per run', async () => {
    const r = await runSoak(SHORT_SOAK);
    assert.equal(r.counts.runs, SHORT_SOAK.runs);
    assert.ok(r.counts.plans > 0, 'plans were made');
    assert.ok(r.counts.joined > 0 && r.counts.left > 0, 'a host joined and left');
    const last = r.samples[r.samples.length - 1]!;
    assert.ok(last.operations.plans_by_drift_check > 0, 'drift checks ran');
    assert.ok(last.operations.runs_by_drift_check > 0, 'drift was repaired');
    // A full collection is forced at each sample (SHORT_SOAK.forceGc), so every process's live heap
    // is judged: a `not judged` here means the forcing or the full-collection counter broke.
    const heaps = r.verdicts.filter((v) => v.series.endsWith('V8 heap after full collections'));
    assert.equal(heaps.length, 1 + SHORT_SOAK.souls, JSON.stringify(heaps));
    assert.deepEqual(
      heaps.filter((v) => v.outcome === 'not judged'),
      [],
      r.summary.join('\n'),
    );
    const failed = r.verdicts.filter((v) => v.outcome === 'fail');
    assert.deepEqual(failed, [], `grew without bound: ${JSON.stringify(failed, null, 1)}`);
    assert.ok(r.ok);
  });
});
