// The soak benchmark's driver (issue 36): one keeper (its own process), a few real souls, and a
// fixed number of runs of mixed services, with everything a long-lived cluster does around them:
//   - runs: two incarnations of two services taken in turn; one changes its input every few runs
//     (a run that writes files), the other re-applies (no-op runs); a third incarnation is left to
//     its drift checks and their repairs (an operator's run would put its files back before a check);
//   - plans every `planEverySec` seconds (POST .../plans, a dry run on every host);
//   - drift checks every `driftInterval` with auto-repair on one incarnation, and every
//     `tamperEvery` runs a managed file deleted on every host, so the checks find drift and repair it;
//   - a host joining (register, `soul init`, `soul run`) and later leaving (stopped, deregistered)
//     every `joinLeaveEvery` runs;
//   - the keeper restarted (SIGTERM, a new process on the same database) at `restartAt` of the runs.
// Every `sampleEvery` runs: RSS, V8 heap and open fds of the keeper and of the long-lived souls,
// the souls' ledger bytes and journals (their metrics), the keeper database's bytes per table, and
// (at every `temporalEvery`-th sample) the bytes of the Temporal histories of this keeper's queue.
// With `forceGc`, a full collection is forced in the keeper and those souls before each sample.
// bench/soak/verdict.ts turns the samples into verdicts; bench/soak/run.ts writes them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { Client as TemporalClient } from '@temporalio/client';
import { api, endpointOf } from '../../test/agents/harness';
import { gitRepoFrom } from '../../test/runs/keeper';
import { repoRoot } from '../../test/support/repo';
import { connectStackTemporal } from '../../test/support/temporal-client';
import { SoulProcesses } from '../fleet/souls';
import { guardRig, initBenchKeeper } from '../support/rig';
import type { SeriesVerdict } from './analyse';
import { collectGarbage, takeHeapSnapshot } from './inspector-gc';
import {
  cleanup,
  connected,
  inspectorFor,
  joinOrLeave,
  onboardNew,
  restartKeeper,
  settle,
  startKeeper,
  tamper,
  withMetrics,
  type Rig,
} from './rig';
import { processSample, tableBytes, temporalHistory, type Sample } from './sample';
import type { SoakOptions } from './soak-options';
import { summaryLines, verdicts } from './verdict';

const PACKAGE = 'git'; // installed on the bench machine: core.pkg.installed finds it and changes nothing
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function operations(pg: PgClient): Promise<Record<string, number>> {
  const r = await pg.query<{ what: string; n: string }>(`
    SELECT (CASE WHEN kind = 'plan' THEN 'plans' ELSE 'runs' END) || (CASE WHEN created_by LIKE 'keeper:drift%' THEN '_by_drift_check' ELSE '' END) AS what, count(*) AS n
    FROM incarnation_runs GROUP BY 1`);
  const out: Record<string, number> = { runs: 0, plans: 0, runs_by_drift_check: 0, plans_by_drift_check: 0 };
  for (const x of r.rows) out[x.what] = Number(x.n);
  // Drift checks in sync keep no row once a later check is recorded (docs/drift.md): they are
  // counted on the incarnation, less the last one of each, which still has its plan row above.
  const dropped = await pg.query<{ n: string }>(
    `SELECT coalesce(sum(drift_checks_in_sync - (CASE WHEN drift_status = 'in_sync' THEN 1 ELSE 0 END)), 0) AS n FROM incarnations`,
  );
  out['drift_checks_in_sync_dropped'] = Math.max(0, Number(dropped.rows[0]?.n ?? 0));
  return out;
}

/** The keeper's heap snapshot at the middle and the end of the run, when asked (heapSnapshotDir). */
async function snapshotKeeper(rig: Rig, o: SoakOptions, runs: number, progress: (l: string) => void) {
  if (!o.heapSnapshotDir || rig.keeperInspect === undefined) return;
  const middle = Math.ceil(o.runs / 2 / o.sampleEvery) * o.sampleEvery;
  if (runs !== middle && runs !== o.runs) return;
  const file = path.join(o.heapSnapshotDir, `keeper-run${runs}.heapsnapshot`);
  const t = Date.now();
  await takeHeapSnapshot(rig.keeperInspect, file);
  progress(`run ${runs}: keeper heap snapshot ${file} (${Math.round((Date.now() - t) / 1000)} s)`);
}

async function sample(rig: Rig, runs: number, t0: number, withTemporal: boolean): Promise<Sample> {
  const ports = [rig.keeperInspect, ...rig.fixed.map((f) => f.inspect)].filter((p) => p !== undefined);
  if (ports.length > 0) {
    await Promise.all(ports.map((p) => collectGarbage(p)));
    // The gc observer's entry is delivered a tick after the collection; give it that tick.
    await sleep(50);
  }
  const keeper = await processSample(rig.keeper.child.pid!, `${rig.k.metricsUrl}/metrics`, '');
  const souls = await Promise.all(
    rig.fixed.map(async ({ soul, metrics }) => {
      const s = await processSample(soul.pid, metrics, 'soul_');
      return {
        sid: soul.sid,
        rss_bytes: s.rss_bytes,
        heap_used_bytes: s.heap_used_bytes,
        heap_after_gc_bytes: s.heap_after_gc_bytes,
        full_gcs: s.full_gcs,
        fds: s.fds,
        ledger_bytes: s.metrics.get('soul_ledger_bytes') ?? NaN,
        ledger_journals: s.metrics.get('soul_ledger_journals') ?? NaN,
      };
    }),
  );
  const tables = await tableBytes(rig.pg);
  return {
    at: new Date().toISOString(),
    runs,
    seconds: Math.round((Date.now() - t0) / 1000),
    load1: os.loadavg()[0]!,
    keeper: {
      pid: rig.keeper.child.pid!,
      rss_bytes: keeper.rss_bytes,
      heap_used_bytes: keeper.heap_used_bytes,
      heap_after_gc_bytes: keeper.heap_after_gc_bytes,
      full_gcs: keeper.full_gcs,
      fds: keeper.fds,
    },
    souls,
    database: { total_bytes: Object.values(tables).reduce((s, t) => s + t.bytes, 0), tables },
    operations: await operations(rig.pg),
    ...(withTemporal
      ? { temporal: await temporalHistory(rig.temporal, rig.k.config.temporal.task_queue).catch(() => null) }
      : {}),
  };
}

export interface SoakResult {
  options: Omit<SoakOptions, 'progress'>;
  seconds: number;
  counts: Record<string, number>;
  samples: Sample[];
  verdicts: SeriesVerdict[];
  /** One line per process and per store (verdict.ts summaryLines). */
  summary: string[];
  per_unit: Record<string, number | null>;
  ok: boolean;
}

export async function runSoak(o: SoakOptions): Promise<SoakResult> {
  const progress = o.progress ?? (() => undefined);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-soak-'));
  const rig: Partial<Rig> = { root, fixed: [], restarts: 0 };
  // An interrupted soak must not leave souls running or drift schedules firing on the shared server:
  // a signal gets the orderly clean-up, and whatever ends the process kills the souls' groups.
  const guard = guardRig(rig, () => cleanup(rig), progress);
  try {
    rig.k = await initBenchKeeper(); // its 15 s lease: the souls share two cores with the keeper
    await startKeeper(rig as Partial<Rig> & Pick<Rig, 'k'>, o.forceGc);
    rig.souls = new SoulProcesses(path.join(root, 'souls'), endpointOf(rig.k));
    rig.pg = new PgClient({ connectionString: rig.k.db.dsn });
    await rig.pg.connect();
    rig.temporal = new TemporalClient({ connection: await connectStackTemporal(), namespace: 'default' });
    const r = rig as Rig;

    for (const [name, ref] of [
      ['fleet', 'v1'],
      ['motd', 'v3'],
    ] as const) {
      const url = gitRepoFrom(
        path.join(repoRoot(), 'test', 'fixtures', 'services', name),
        path.join(root, `${name}.git`),
        ref,
      );
      const svc = await api(r.k, 'POST', '/v1/services', { name, git: url, ref });
      if (svc.status !== 201) throw new Error(`POST /v1/services ${name}: ${svc.status} ${JSON.stringify(svc.body)}`);
    }
    for (let i = 0; i < o.souls; i++) {
      // The first soul alone also carries motd (its files are not per host, so one host only).
      const sid = await onboardNew(r, `soak${i + 1}`, i === 0 ? ['soak', 'motd'] : ['soak']);
      const metrics = await withMetrics(r.souls, sid);
      const inspector = await inspectorFor(o.forceGc);
      const soul = r.souls.run(sid, inspector.flags);
      await connected(r, sid, soul);
      r.fixed.push({ soul, metrics, inspect: inspector.port });
    }
    progress(`${o.souls} souls connected`);

    const counts: Record<string, number> = {
      runs: 0,
      conflicts: 0,
      locked: 0,
      plans: 0,
      tampered: 0,
      joined: 0,
      left: 0,
    };
    const out = (n: string) => path.join(root, 'out', n);
    const incarnations = [
      {
        name: 'soak-drift',
        service: 'fleet',
        covens: ['soak'],
        input: { root: out('drift'), package: PACKAGE, message: 'drift' },
      },
      {
        name: 'soak-change',
        service: 'fleet',
        covens: ['soak'],
        input: { root: out('change'), package: PACKAGE, message: 'm0' },
      },
      {
        name: 'soak-motd',
        service: 'motd',
        covens: ['motd'],
        input: { root: out('motd'), package: PACKAGE, message: 'hello' },
      },
    ];
    for (const inc of incarnations) {
      const c = await api(r.k, 'POST', '/v1/incarnations', inc);
      if (c.status !== 202) throw new Error(`POST /v1/incarnations ${inc.name}: ${c.status} ${JSON.stringify(c.body)}`);
      await settle(r, inc.name, counts);
    }
    const drift = await api(r.k, 'PUT', '/v1/incarnations/soak-drift/drift-check', {
      interval: o.driftInterval,
      auto_repair: true,
    });
    if (drift.status !== 200) throw new Error(`PUT drift-check: ${drift.status} ${JSON.stringify(drift.body)}`);

    const t0 = Date.now();
    const samples: Sample[] = [await sample(r, 0, t0, true)];
    let lastPlan = Date.now();
    const restartAfter = Math.round(o.runs * o.restartAt);
    while (counts.runs < o.runs) {
      const inc = incarnations[1 + (counts.runs % 2)]!;
      // Every fifth run of soak-change writes a new message (files change); the rest re-apply.
      const body =
        inc.name === 'soak-change' && counts.runs % 10 === 0
          ? { operation: 'create', input: { ...inc.input, message: `m${counts.runs}` } }
          : { operation: 'create' };
      const p = await api(r.k, 'POST', `/v1/incarnations/${inc.name}/runs`, body);
      if (p.status === 409) {
        counts.conflicts += 1;
        await sleep(200);
        await settle(r, inc.name, counts);
        continue;
      } // a repair holds it
      if (p.status !== 202) throw new Error(`POST run ${inc.name}: ${p.status} ${JSON.stringify(p.body)}`);
      await settle(r, inc.name, counts);
      counts.runs += 1;

      if (Date.now() - lastPlan >= o.planEverySec * 1000) {
        lastPlan = Date.now();
        const plan = await api(r.k, 'POST', '/v1/incarnations/soak-change/plans', { operation: 'create' });
        if (plan.status === 202 || plan.status === 201) counts.plans += 1;
      }
      if (counts.runs % o.tamperEvery === 0) counts.tampered += tamper(out('drift'));
      if (counts.runs % o.joinLeaveEvery === 0) await joinOrLeave(r, counts);
      // A repair that met a host leaving locks the incarnation; unlocked, the checks go on.
      if ((await api(r.k, 'GET', '/v1/incarnations/soak-drift')).body?.status === 'error_locked') {
        counts.locked += 1;
        await api(r.k, 'POST', '/v1/incarnations/soak-drift/unlock', {});
      }
      if (counts.runs === restartAfter) {
        progress(`run ${counts.runs}: restarting the keeper`);
        await restartKeeper(r, o.forceGc);
      }
      if (counts.runs % o.sampleEvery === 0) {
        const s = await sample(
          r,
          counts.runs,
          t0,
          (counts.runs / o.sampleEvery) % o.temporalEvery === 0 || counts.runs === o.runs,
        );
        samples.push(s);
        await snapshotKeeper(r, o, counts.runs, progress);
        progress(
          `run ${counts.runs}/${o.runs} (${s.seconds} s, load ${s.load1.toFixed(1)}): keeper ${(s.keeper.rss_bytes / 2 ** 20).toFixed(1)} MB rss, ${(s.keeper.heap_used_bytes / 2 ** 20).toFixed(1)} MB heap, ${s.keeper.full_gcs} full GCs, ${s.keeper.fds} fds; ` +
            `souls ${s.souls.map((x) => (x.rss_bytes / 2 ** 20).toFixed(1)).join('/')} MB rss, ${s.souls.map((x) => x.full_gcs).join('/')} full GCs; db ${(s.database.total_bytes / 2 ** 20).toFixed(1)} MB; ops ${JSON.stringify(s.operations)}`,
        );
      }
    }
    await api(r.k, 'PUT', '/v1/incarnations/soak-drift/drift-check', { interval: null });
    const seconds = Math.round((Date.now() - t0) / 1000);
    const judged = verdicts(o, samples);
    return {
      options: { ...o, progress: undefined } as Omit<SoakOptions, 'progress'>,
      seconds,
      counts,
      samples,
      ...judged,
      summary: summaryLines(judged.verdicts),
    };
  } finally {
    await guard.finish();
  }
}
