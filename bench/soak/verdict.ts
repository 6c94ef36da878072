// The soak's verdicts from its samples (bench/soak/analyse.ts says how a series is judged): per
// process its RSS, its live heap (after full collections, or `not judged`) and its open files; for
// the stores that keep history, their bytes per unit of work against the documented bounds. The soak
// fails only on a judged series that failed; a heap that was not judged is said, per process, in the
// summary lines the bench prints.
import { judge, judgeAfterFullCollections, perUnit, type GcPoint, type Point, type SeriesVerdict } from './analyse';
import type { Sample } from './sample';
import type { SoakOptions } from './soak-options';

type ProcessPick = (s: Sample) => {
  rss_bytes: number;
  heap_after_gc_bytes: number;
  full_gcs: number;
  fds: number;
};

function processVerdicts(
  who: string,
  samples: Sample[],
  pick: ProcessPick,
  max: number,
  limits: { rss: number; heap: number; fds: number },
): SeriesVerdict[] {
  const series = (value: (s: Sample) => number): Point[] =>
    samples.filter((s) => Number.isFinite(value(s))).map((s) => ({ runs: s.runs, value: value(s) }));
  const gc: GcPoint[] = samples.map((s) => ({
    runs: s.runs,
    heap_after_gc_bytes: pick(s).heap_after_gc_bytes,
    full_gcs: pick(s).full_gcs,
  }));
  return [
    judge(
      `${who} RSS`,
      'bytes',
      series((s) => pick(s).rss_bytes),
      max,
      limits.rss,
    ),
    judgeAfterFullCollections(`${who} V8 heap after full collections`, gc, max, limits.heap),
    judge(
      `${who} open fds`,
      'fds',
      series((s) => pick(s).fds),
      max,
      limits.fds,
    ),
  ].map((v) => ({ ...v, process: who }));
}

export function verdicts(
  o: Omit<SoakOptions, 'progress'>,
  samples: Sample[],
): { verdicts: SeriesVerdict[]; per_unit: Record<string, number | null>; ok: boolean } {
  const max = o.runs;
  const t = o.thresholds;
  const v: SeriesVerdict[] = processVerdicts('keeper', samples, (s) => s.keeper, max, {
    rss: t.keeper_rss_bytes,
    heap: t.keeper_heap_bytes,
    fds: t.keeper_fds,
  });
  samples[0]?.souls.forEach((soul, i) => {
    v.push(
      ...processVerdicts(`soul ${soul.sid}`, samples, (s) => s.souls[i]!, max, {
        rss: t.soul_rss_bytes,
        heap: t.soul_heap_bytes,
        fds: t.soul_fds,
      }),
    );
  });
  // Stores that keep history: bytes per unit of work over the whole soak, against the documented bound.
  const first = samples[0]!;
  const last = samples[samples.length - 1]!;
  const opsOf = (s: Sample) =>
    s.operations.runs +
    s.operations.plans +
    s.operations.runs_by_drift_check +
    s.operations.plans_by_drift_check +
    (s.operations.drift_checks_in_sync_dropped ?? 0);
  const ops = opsOf(last) - opsOf(first);
  // One apply per host per run: a soul's journals grow by one per run that targets it.
  const journals = last.souls.map((s, i) => s.ledger_journals - first.souls[i]!.ledger_journals);
  const ledgerPerApply = last.souls.map((s, i) => perUnit(first.souls[i]!.ledger_bytes, s.ledger_bytes, journals[i]!));
  const dbPerOp = perUnit(first.database.total_bytes, last.database.total_bytes, ops);
  const withTemporal = samples.filter((s) => s.temporal);
  const tFirst = withTemporal[0]?.temporal;
  const tLast = withTemporal[withTemporal.length - 1]?.temporal;
  const per_unit: Record<string, number | null> = {
    operations: ops,
    database_bytes_per_operation: dbPerOp,
    ledger_bytes_per_apply_per_host_max: Math.max(...ledgerPerApply.map((x) => x ?? 0)),
    temporal_workflows: tFirst && tLast ? tLast.workflows - tFirst.workflows : null,
    temporal_history_bytes_per_workflow:
      tFirst && tLast ? perUnit(tFirst.bytes, tLast.bytes, tLast.workflows - tFirst.workflows) : null,
  };
  const bounded = (series: string, value: number | null, bound: number): SeriesVerdict => ({
    series,
    unit: 'bytes per unit',
    slope_per_1000_runs: value,
    threshold_per_1000_runs: bound,
    first: null,
    last: value,
    outcome: value !== null && value <= bound ? 'pass' : 'fail',
  });
  v.push(
    bounded(
      'ledger bytes per apply per host',
      per_unit.ledger_bytes_per_apply_per_host_max!,
      o.bounds.ledger_bytes_per_apply_per_host,
    ),
  );
  v.push(
    bounded('database bytes per operation (run, plan or drift check)', dbPerOp, o.bounds.database_bytes_per_operation),
  );
  return { verdicts: v, per_unit, ok: v.every((x) => x.outcome !== 'fail') };
}

const MB = 2 ** 20;

function figure(v: SeriesVerdict): string {
  if (v.outcome === 'not judged') return v.note ?? 'not judged';
  const bytes = v.unit === 'bytes';
  const n = (x: number | null) =>
    x === null ? 'none' : bytes ? `${(x / MB).toFixed(1)} MB` : String(Math.round(x * 10) / 10);
  const slope =
    v.slope_per_1000_runs === null ? 'no slope' : `${v.slope_per_1000_runs >= 0 ? '+' : ''}${n(v.slope_per_1000_runs)}`;
  return `${v.outcome} ${slope} per 1,000 runs (limit ${n(v.threshold_per_1000_runs)})${v.note ? `, ${v.note}` : ''}`;
}

/**
 * One line per process ("keeper: RSS pass +1.2 MB per 1,000 runs (limit 8.0 MB); heap after full
 * collections not judged: 0 full collections in the second half; open fds pass ...") and one per store.
 */
export function summaryLines(vs: SeriesVerdict[]): string[] {
  const lines: string[] = [];
  const processes = [...new Set(vs.filter((v) => v.process).map((v) => v.process!))];
  for (const p of processes) {
    const parts = vs
      .filter((v) => v.process === p)
      .map(
        (v) =>
          `${v.series.slice(p.length + 1).replace('V8 heap after full collections', 'heap after full GC')} ${figure(v)}`,
      );
    lines.push(`${p}: ${parts.join('; ')}`);
  }
  for (const v of vs.filter((x) => !x.process))
    lines.push(`${v.series}: ${v.outcome} ${v.last ?? 'none'} (bound ${v.threshold_per_1000_runs})`);
  return lines;
}
