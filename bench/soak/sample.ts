// What the soak benchmark reads at each sample: a process's memory and open files from /proc, its V8
// heap from its Prometheus endpoint, the keeper database's bytes per table, and the bytes of the
// Temporal histories of this keeper's task queue.
import fs from 'node:fs';
import type { Client as TemporalClient } from '@temporalio/client';
import type { Client as PgClient } from 'pg';

/** One sample of the soak: the keeper's and each soul's process, the stores, the work done so far. */
export interface Sample {
  at: string;
  runs: number;
  seconds: number;
  /** The machine's 1-minute load average: the soak shares its cores with whatever else runs. */
  load1: number;
  keeper: {
    pid: number;
    rss_bytes: number;
    heap_used_bytes: number;
    heap_after_gc_bytes: number;
    full_gcs: number;
    fds: number;
  };
  souls: {
    sid: string;
    rss_bytes: number;
    heap_used_bytes: number;
    heap_after_gc_bytes: number;
    full_gcs: number;
    fds: number;
    ledger_bytes: number;
    ledger_journals: number;
  }[];
  database: { total_bytes: number; tables: Record<string, { bytes: number; rows: number }> };
  operations: Record<string, number>;
  temporal?: { workflows: number; bytes: number } | null;
}

export interface ProcessSample {
  rss_bytes: number;
  heap_used_bytes: number;
  /** The heap right after the process's last full collection (NaN before its first). */
  heap_after_gc_bytes: number;
  /** Full collections the process has seen (its `*_full_gcs_total`; NaN when unread). */
  full_gcs: number;
  fds: number;
}

/** VmRSS in bytes (NaN when the process is gone). */
export function rssBytes(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? NaN : Number(kb) * 1024;
  } catch {
    return NaN;
  }
}

/** Open file descriptors (sockets, files, pipes) of a process. */
export function openFds(pid: number): number {
  try {
    return fs.readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
}

/** The value of each metric of a Prometheus text scrape, by name: its first series (the keeper labels every series with its kid). */
export async function scrape(url: string): Promise<Map<string, number>> {
  const text = await (await fetch(url, { signal: AbortSignal.timeout(10_000) })).text();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{[^}]*\})? (\S+)$/.exec(line);
    if (m && !out.has(m[1]!)) out.set(m[1]!, Number(m[2]));
  }
  return out;
}

export async function processSample(
  pid: number,
  metricsUrl: string,
  prefix: string,
): Promise<ProcessSample & { metrics: Map<string, number> }> {
  const metrics = await scrape(metricsUrl).catch(() => new Map<string, number>());
  return {
    rss_bytes: rssBytes(pid),
    heap_used_bytes: metrics.get(`${prefix}nodejs_heap_size_used_bytes`) ?? NaN,
    // 0 until the process's first full collection (an unset gauge reads 0): no figure yet.
    heap_after_gc_bytes: metrics.get(`${prefix || 'keeper_'}heap_after_full_gc_bytes`) || NaN,
    full_gcs: metrics.get(`${prefix || 'keeper_'}full_gcs_total`) ?? NaN,
    fds: openFds(pid),
    metrics,
  };
}

/** Bytes of every table of the keeper's database (with its indexes and TOAST), and rows (estimates). */
export async function tableBytes(pg: PgClient): Promise<Record<string, { bytes: number; rows: number }>> {
  const r = await pg.query<{ relname: string; bytes: string; rows: string }>(
    `SELECT relname, pg_total_relation_size(relid) AS bytes, n_live_tup AS rows FROM pg_stat_user_tables ORDER BY relname`,
  );
  return Object.fromEntries(r.rows.map((x) => [x.relname, { bytes: Number(x.bytes), rows: Number(x.rows) }]));
}

/**
 * The history bytes of every workflow of `taskQueue` (open and closed ones, as the server keeps them
 * until the namespace's retention), and how many there are. null when the server does not report
 * history sizes.
 */
export async function temporalHistory(
  client: TemporalClient,
  taskQueue: string,
): Promise<{ workflows: number; bytes: number } | null> {
  let workflows = 0;
  let bytes = 0;
  let sized = false;
  for await (const wf of client.workflow.list({ query: `TaskQueue = '${taskQueue}'` })) {
    workflows += 1;
    if (wf.historySize !== undefined) {
      sized = true;
      bytes += wf.historySize;
    }
  }
  return workflows > 0 && !sized ? null : { workflows, bytes };
}
