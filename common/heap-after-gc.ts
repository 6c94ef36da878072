// The V8 heap a full collection leaves: the live heap. `heap used` swings by tens of MB between
// collections, so the floor of a window of samples says where the process stood in V8's sawtooth,
// not what it keeps (docs/performance.md "bench/soak", the 1,000-run soak). The heap read right
// after each mark-sweep is what a leak raises and a heap still finding its size does not, so the
// keeper and the soul export it as a gauge and the soak judges it.
import { PerformanceObserver, constants } from 'node:perf_hooks';
import v8 from 'node:v8';
import type PromClient from 'prom-client';

let observer: PerformanceObserver | undefined;
let last: { bytes: number; at: number; count: number } | undefined;

/** Starts watching full collections (once per process); later calls do nothing. */
export function watchFullCollections(): void {
  if (observer) return;
  observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
      if (kind !== constants.NODE_PERFORMANCE_GC_MAJOR) continue;
      // Read when the entry is delivered, a tick after the collection: what was allocated in
      // between is counted too, a few KB at most against a heap of megabytes.
      last = { bytes: v8.getHeapStatistics().used_heap_size, at: Date.now(), count: (last?.count ?? 0) + 1 };
    }
  });
  observer.observe({ entryTypes: ['gc'] });
}

/** The heap after the last full collection since watching began; undefined before the first. */
export function heapAfterFullCollection(): { bytes: number; at: number; count: number } | undefined {
  return last;
}

/**
 * `<prefix>_heap_after_full_gc_bytes` and `<prefix>_full_gcs_total` in `registry`, watching from now:
 * the keeper and the soul report the same two series. `client` is passed in because the soul loads
 * prom-client only when its metrics listener is on.
 */
export function registerFullGcMetrics(
  client: typeof PromClient,
  registry: PromClient.Registry,
  prefix: 'keeper' | 'soul',
): void {
  watchFullCollections();
  new client.Gauge({
    name: `${prefix}_heap_after_full_gc_bytes`,
    help: 'V8 heap used right after the last full (mark-sweep) collection: the live heap; 0 before the first',
    registers: [registry],
    collect() {
      const h = heapAfterFullCollection();
      if (h) this.set(h.bytes);
    },
  });
  // How many full collections the gauge above stands on: a soak judges the live heap only over
  // collections it saw (bench/soak/verdict.ts), and says so when there were too few.
  let reported = 0;
  new client.Counter({
    name: `${prefix}_full_gcs_total`,
    help: 'Full (mark-sweep) collections since the process started watching them (at start)',
    registers: [registry],
    collect() {
      const n = heapAfterFullCollection()?.count ?? 0;
      if (n > reported) this.inc(n - reported);
      reported = n;
    },
  });
}
