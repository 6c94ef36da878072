// How the soak benchmark tells a footprint that settled from one that grows without bound.
//
// Memory is sampled at arbitrary points of the garbage collector's cycle, so one sample says little:
// the heap of a process that holds nothing new swings by megabytes between collections. What a leak
// moves is the floor, what is left after a collection. So the samples are cut into windows by run
// count, each window's minimum is its floor, and the verdict is the least-squares slope of the floors
// over the second half of the run (the first half is start-up: modules loading, caches filling up to
// their bounds, the keeper's restart). A series passes when that slope, per 1,000 runs, is at most its
// threshold. Stores that keep history by design (the database, Temporal, the souls' journals within
// their retention) grow with every run; for them the check is the bytes per run against the documented
// figure (docs/performance.md, "Soak"), not flatness.

export interface Point {
  runs: number;
  value: number;
}

export interface SeriesVerdict {
  series: string;
  unit: string;
  /** Growth of the floor per 1,000 runs over the second half (least squares); null without enough samples. */
  slope_per_1000_runs: number | null;
  threshold_per_1000_runs: number;
  first: number | null;
  last: number | null;
  ok: boolean;
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
    ok: per1000 !== null && per1000 <= thresholdPer1000,
  };
}

/** Bytes a store gained per unit of work between two readings, for the documented figures. */
export function perUnit(before: number, after: number, units: number): number | null {
  return units > 0 ? Math.round((after - before) / units) : null;
}
