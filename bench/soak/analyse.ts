// How the soak benchmark tells a footprint that settled from one that grows without bound.
//
// Memory is sampled at arbitrary points of the garbage collector's cycle, so one sample says little:
// the heap of a process that holds nothing new swings by megabytes between collections. For RSS and
// open files the samples are cut into windows by run count, each window's minimum is its floor, and
// the verdict is the least-squares slope of the floors over the second half of the run (the first
// half is start-up: modules loading, caches filling up to their bounds, the keeper's restart). A
// series passes when that slope, per 1,000 runs, is at most its threshold.
//
// The V8 heap is judged on what full collections leave (judgeAfterFullCollections): a floor of heap
// used is where a window ended in V8's sawtooth, not what the process keeps, and a process that
// collected fully fewer than twice in the second half cannot be judged at all. That is said as a
// third outcome, `not judged`, which neither passes nor fails the soak.
//
// Stores that keep history by design (the database, Temporal, the souls' journals within their
// retention) grow with every run; for them the check is the bytes per run against the documented
// figure (docs/performance.md, "Soak"), not flatness.

export interface Point {
  runs: number;
  value: number;
}

export type Outcome = 'pass' | 'fail' | 'not judged';

export interface SeriesVerdict {
  series: string;
  /** The process the series belongs to (`keeper`, `soul <sid>`); absent for the stores. */
  process?: string;
  unit: string;
  /** Growth of the floor per 1,000 runs over the second half (least squares); null without enough samples. */
  slope_per_1000_runs: number | null;
  threshold_per_1000_runs: number;
  first: number | null;
  last: number | null;
  outcome: Outcome;
  /** Why a series was not judged, or what it was judged over. */
  note?: string;
}

/** Least-squares slope of y over x; null for fewer than two distinct x. */
export function slope(points: Point[]): number | null {
  if (points.length < 2) return null;
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.runs, 0) / n;
  const my = points.reduce((s, p) => s + p.value, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.runs - mx) * (p.value - my);
    den += (p.runs - mx) ** 2;
  }
  return den === 0 ? null : num / den;
}

/**
 * The floor (minimum) of each of `windows` equal windows of run count over [0, maxRuns], at the
 * window's middle; windows without samples are left out.
 */
export function floors(points: Point[], maxRuns: number, windows: number): Point[] {
  const width = maxRuns / windows;
  const out: Point[] = [];
  for (let w = 0; w < windows; w++) {
    const lo = w * width;
    const hi = (w + 1) * width;
    const inside = points.filter((p) => p.runs >= lo && (p.runs < hi || (w === windows - 1 && p.runs <= hi)));
    if (inside.length > 0) out.push({ runs: (lo + hi) / 2, value: Math.min(...inside.map((p) => p.value)) });
  }
  return out;
}

/** The verdict on one series: the slope of its floors over the second half against the threshold. */
export function judge(
  series: string,
  unit: string,
  points: Point[],
  maxRuns: number,
  thresholdPer1000: number,
  windows = 8,
): SeriesVerdict {
  const secondHalf = floors(points, maxRuns, windows).filter((p) => p.runs >= maxRuns / 2);
  const s = slope(secondHalf);
  const per1000 = s === null ? null : s * 1000;
  return {
    series,
    unit,
    slope_per_1000_runs: per1000 === null ? null : Math.round(per1000 * 1000) / 1000,
    threshold_per_1000_runs: thresholdPer1000,
    first: points[0]?.value ?? null,
    last: points[points.length - 1]?.value ?? null,
    // Too few samples to judge is a failure: a soak that measured nothing must not pass.
    outcome: per1000 !== null && per1000 <= thresholdPer1000 ? 'pass' : 'fail',
  };
}

/** One sample of a process's heap after its last full collection and its count of them. */
export interface GcPoint {
  runs: number;
  /** NaN before the process's first full collection. */
  heap_after_gc_bytes: number;
  /** The process's full collections so far (its `*_full_gcs_total`); NaN when it could not be read. */
  full_gcs: number;
}

/**
 * The full collections between samples of the second half (a count that falls is a restarted
 * process, counted from 0), and one point per sample that followed at least one: the heap the
 * latest of them left.
 */
export function collectionsInSecondHalf(samples: GcPoint[], maxRuns: number): { count: number; points: Point[] } {
  const read = samples.filter((s) => Number.isFinite(s.full_gcs));
  let count = 0;
  const points: Point[] = [];
  for (let i = 1; i < read.length; i++) {
    const prev = read[i - 1]!;
    const cur = read[i]!;
    if (prev.runs < maxRuns / 2) continue;
    const n = cur.full_gcs >= prev.full_gcs ? cur.full_gcs - prev.full_gcs : cur.full_gcs;
    count += n;
    if (n > 0 && Number.isFinite(cur.heap_after_gc_bytes))
      points.push({ runs: cur.runs, value: cur.heap_after_gc_bytes });
  }
  return { count, points };
}

/**
 * The verdict on a process's live heap: the least-squares slope, over the second half, of the heap
 * its full collections left, when at least two samples there followed a full collection; otherwise
 * `not judged`, naming how many full collections there were.
 */
export function judgeAfterFullCollections(
  series: string,
  samples: GcPoint[],
  maxRuns: number,
  thresholdPer1000: number,
): SeriesVerdict {
  const { count, points } = collectionsInSecondHalf(samples, maxRuns);
  const s = points.length >= 2 ? slope(points) : null;
  const base = {
    series,
    unit: 'bytes',
    threshold_per_1000_runs: thresholdPer1000,
    first: points[0]?.value ?? null,
    last: points[points.length - 1]?.value ?? null,
  };
  if (s === null)
    return {
      ...base,
      slope_per_1000_runs: null,
      outcome: 'not judged',
      note: `not judged: ${count} full collection${count === 1 ? '' : 's'} in the second half${count >= 2 ? `, seen at ${points.length} sample` : ''}`,
    };
  const per1000 = s * 1000;
  return {
    ...base,
    slope_per_1000_runs: Math.round(per1000 * 1000) / 1000,
    outcome: per1000 <= thresholdPer1000 ? 'pass' : 'fail',
    note: `${count} full collections in the second half, ${points.length} samples after one`,
  };
}

/** Bytes a store gained per unit of work between two readings, for the documented figures. */
export function perUnit(before: number, after: number, units: number): number | null {
  return units > 0 ? Math.round((after - before) / units) : null;
}
