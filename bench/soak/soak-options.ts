// The soak's two shapes: the long one (bench/soak/run.ts, run by hand for docs/performance.md) and
// the short one `make test` runs (test/soak/soak.test.ts) so that a new unbounded cache shows.
//
// Thresholds are per 1,000 runs of growth over the second half (bench/soak/analyse.ts): of a floor
// for RSS and fds, of the heap full collections leave for the V8 heap.
// A process that holds nothing per run has a flat floor; one that keeps 1 KB per run grows 1 MB
// per 1,000 runs. The long soak's limits catch a leak of a few KB per run; the short soak has few
// runs to fit a slope through, so its limits are wider and catch what keeps a run's worth of data
// (a report, a plan, a journal: tens of KB and more) per run.

const MB = 2 ** 20;

/** What one soak does and the limits it is judged by (LONG_SOAK, SHORT_SOAK below). */
export interface SoakOptions {
  runs: number;
  souls: number;
  planEverySec: number;
  /** The drift check interval (a duration the API accepts, e.g. "2s"). */
  driftInterval: string;
  tamperEvery: number;
  joinLeaveEvery: number;
  /** Fraction of the runs after which the keeper is restarted. */
  restartAt: number;
  sampleEvery: number;
  temporalEvery: number;
  /** Per 1,000 runs: the most a memory or fd floor may grow over the second half (analyse.ts). */
  thresholds: {
    keeper_rss_bytes: number;
    keeper_heap_bytes: number;
    keeper_fds: number;
    soul_rss_bytes: number;
    soul_heap_bytes: number;
    soul_fds: number;
  };
  /** Upper bounds per unit of work, the documented figures (docs/performance.md "Soak"). */
  bounds: { ledger_bytes_per_apply_per_host: number; database_bytes_per_operation: number };
  /**
   * Force a full collection in the keeper and the long-lived souls before each sample (their
   * inspector, bench/soak/inspector-gc.ts), so every process's live heap is judged; otherwise the
   * heap is judged only over the full collections V8 chose to make.
   */
  forceGc: boolean;
  /**
   * With `forceGc`: a directory where a heap snapshot of the keeper is written at the middle of the
   * run (after the restart, of the same process) and at its end, for bench/soak/heap-diff.ts.
   */
  heapSnapshotDir?: string;
  progress?: (line: string) => void;
}

/** Bytes of the stores per unit of work that the soak holds them to (docs/performance.md "Soak"). */
export const SOAK_BOUNDS: SoakOptions['bounds'] = {
  // A journal line is about 330 bytes plus the step's output and diff (docs/agents.md); these steps
  // have short outputs, three steps per apply.
  ledger_bytes_per_apply_per_host: 2_000,
  database_bytes_per_operation: 40_000,
};

export const LONG_SOAK: Omit<SoakOptions, 'progress'> = {
  runs: 1000,
  souls: 3,
  planEverySec: 5,
  driftInterval: '2s',
  tamperEvery: 10,
  joinLeaveEvery: 100,
  // The keeper restarts at run 100, not later: a fresh keeper's RSS climbs until its Temporal
  // workflow cache (runs/worker.ts MAX_CACHED_WORKFLOWS, 500 runs, about 2 workflows per soak run)
  // is full, some 250 runs. Restarted at run 333, that refill reached run 600 and the second half's
  // RSS slope measured it (+36 MB per 1,000 runs over runs 500-1,000, +7 over 600-1,000: 2026-11-26,
  // docs/performance.md); restarted at 100, it ends before the judged half begins.
  restartAt: 1 / 10,
  sampleEvery: 10,
  temporalEvery: 10,
  thresholds: {
    keeper_rss_bytes: 8 * MB,
    keeper_heap_bytes: 4 * MB,
    keeper_fds: 5,
    soul_rss_bytes: 4 * MB,
    soul_heap_bytes: 2 * MB,
    soul_fds: 5,
  },
  bounds: SOAK_BOUNDS,
  // The natural figures by default: `--force-gc` (bench/soak/run.ts) measures the live heap at every sample.
  forceGc: false,
};

// The keeper restarts at run 15, and a fresh keeper's memory climbs for its first hundred-odd runs
// (measured on a loaded machine over runs 45-90: RSS floor +45 MB, 1,000 MB per 1,000 runs; heap
// 180 MB per 1,000 runs), so in 90 runs the keeper's limits only catch a leak of megabytes per run.
// The long soak judges the keeper's memory; here its fds, the souls and the stores are what count.
export const SHORT_SOAK: Omit<SoakOptions, 'progress'> = {
  runs: 90,
  souls: 2,
  planEverySec: 5,
  driftInterval: '5s',
  tamperEvery: 10,
  joinLeaveEvery: 30,
  restartAt: 1 / 6,
  sampleEvery: 3,
  temporalEvery: 10,
  thresholds: {
    keeper_rss_bytes: 3000 * MB,
    keeper_heap_bytes: 1000 * MB,
    keeper_fds: 100,
    soul_rss_bytes: 100 * MB,
    soul_heap_bytes: 50 * MB,
    soul_fds: 50,
  },
  bounds: SOAK_BOUNDS,
  // 90 runs are too few for V8 to collect fully on its own (a soul often has no full collection in
  // 400), so the short soak forces one at each sample and every process's live heap is judged.
  forceGc: true,
};
