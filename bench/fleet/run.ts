// Benchmark (not a test): runs applied by N real souls (issue 18).
//   node dist/bench/fleet/run.js [N ...]   (default: 1 10 100)
// One keeper as its own process (`bin/keeper run`, test/runs/keeper.ts: its own database, secret,
// queue and ports, shipped reaper settings), so its CPU is its own. Souls are real `soul init` +
// `soul run` processes (bench/fleet/souls.ts), each in its own UTS namespace named after its SID and
// its own process group, onboarded with a bootstrap token each; the fleet grows to each N in turn
// (a soul carries coven `n<N>` of every size it belongs to, so a run of size N targets exactly N souls
// and no earlier incarnation converges onto the newcomers). The service is test/fixtures/services/fleet
// from a local git repository: a package present (`git`), a 0600 file and a rendered 0644 file under
// <input.root>/<fqdn>/.
// Per N: a first run (creates the incarnation, reported apart), then R change runs (a new input.root
// each: two files to write on every host) and R no-op runs (the last input again), R = 5 for one
// soul and 3 otherwise. Per run: POST -> the incarnation `ready` (seen by polling PostgreSQL every
// 10 ms, so waiting adds no keeper work), the CPU seconds of the keeper, of the souls, of the
// Temporal dev server and of PostgreSQL (those two are shared with whatever else runs on the machine),
// and where the time went (bench/fleet/timeline.ts). Per batch of runs: the keeper database's
// transactions per host (bench/fleet/db-count.ts says what they are). Once: one idle soul's RSS and
// `soul run` start -> connected. Progress on stderr; figures on stdout and in bench/results/fleet.json.
// Needs `make stack` and `make build`; run as root (unshare).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { api, waitFor } from '../../test/agents/harness';
import { gitRepoFrom } from '../../test/runs/keeper';
import { repoRoot } from '../../test/support/repo';
import { FLUSH_MS, delta, idleRate, type DbSnapshot } from './db-count';
import { rssMb } from './proc';
import { connectedCount, grow, guardRig, ONBOARD_CONCURRENCY, sizesFromArgs } from '../support/rig';
import { cleanup, progress, registryConnected, type Rig, round, sleep, startRig, stats } from './rig';
import { type RunningSoul } from './souls';
import { RunFailed, timedRun, type Timed } from './timed-run';
import { medianRecord, reportSegments, workflowTimes, type RunReport } from './timeline';

const PACKAGE = 'git'; // installed on the bench machine: core.pkg.installed finds it and changes nothing
const repsFor = (n: number) => (n === 1 ? 5 : 3);

/** The first soul alone: `soul run` -> connected, started once and restarted three times, then its idle RSS. */
async function idleSoul(rig: Rig, soul: RunningSoul): Promise<Record<string, unknown>> {
  const registry: number[] = [];
  const own: number[] = [];
  const uptime: number[] = [];
  for (let i = 0; ; i++) {
    registry.push(await registryConnected(rig, soul));
    await waitFor('the connected log line', async () => soul.connectedAt !== undefined, 5000, 10);
    own.push(soul.connectedAt! - soul.spawnedAt);
    if (soul.connectedUptimeMs !== undefined) uptime.push(soul.connectedUptimeMs);
    if (i === 3) break;
    // SIGTERM: the soul says goodbye, the registry shows it gone, and the next start is a fresh one.
    await rig.souls.stopOne(soul);
    await waitFor(
      `${soul.sid} disconnected`,
      async () => (await api(rig.k, 'GET', `/v1/souls/${soul.sid}`)).body?.status !== 'connected',
      30_000,
      50,
    );
    soul = rig.souls.run(soul.sid);
  }
  progress(`idle soul connected in ${registry.join(', ')} ms (registry); settling 10 s for its RSS`);
  await sleep(10_000);
  return {
    soul_run_to_registry_connected_ms: { ...stats(registry), samples: registry },
    soul_run_to_welcome_ms: {
      ...stats(own),
      samples: own,
      what: "spawn -> the soul's own `connected` log line (its Welcome)",
    },
    soul_process_to_welcome_ms: {
      ...stats(uptime),
      samples: uptime,
      what: "the soul's node process started -> its Welcome (the `connected` line's uptime_ms; without nice, unshare and sh)",
    },
    rss_mb: round(rssMb(soul.pid), 1),
  };
}

/** A batch of runs of one incarnation and the keeper database's transactions over it. */
async function batch(
  rig: Rig,
  name: string,
  n: number,
  label: string,
  reps: number,
  input: (r: number) => Record<string, unknown>,
  idle: ReturnType<typeof idleRate>,
) {
  const before: DbSnapshot = await rig.db.snapshot();
  const runs: Timed[] = [];
  for (let r = 1; r <= reps; r++) {
    const t = await timedRun(rig, name, `N=${n} ${label} run ${r}/${reps}`, () =>
      api(rig.k, 'POST', `/v1/incarnations/${name}/runs`, { operation: 'create', input: input(r) }),
    );
    runs.push(t);
    progress(`N=${n} ${label} run ${r}/${reps}: ${(t.post_to_ready_ms / 1000).toFixed(3)} s`);
    await sleep(1000);
  }
  await sleep(FLUSH_MS);
  const d = delta(before, await rig.db.snapshot(), idle);
  return {
    runs,
    loadavg_1m: round(os.loadavg()[0]!),
    db: {
      transactions_per_host: round(d.transactions / (reps * n), 1),
      rows_written_per_host: round(d.rowsWritten / (reps * n), 1),
    },
  };
}

async function summarize(rig: Rig, name: string, n: number, runs: Timed[], expect: 'changed' | 'ok') {
  const segments = [];
  const workflows = [];
  const hostStatuses: Record<string, number> = {};
  for (const t of runs) {
    const rep = (await api(rig.k, 'GET', `/v1/incarnations/${name}/runs/${t.apply_id}`)).body as RunReport;
    if (rep.hosts.length !== n) throw new Error(`${t.apply_id}: ${rep.hosts.length} hosts, not ${n}`);
    for (const h of rep.hosts) hostStatuses[h.status] = (hostStatuses[h.status] ?? 0) + 1;
    segments.push(reportSegments(rep, t.postedAt, t.observedAt));
    workflows.push(await workflowTimes(rig.temporal, t.apply_id));
  }
  const cpu = (k: string, d = 2) =>
    stats(
      runs.map((t) => t.cpu[k]!),
      d,
    );
  return {
    post_to_ready_ms: {
      ...stats(runs.map((t) => t.post_to_ready_ms)),
      samples: runs.map((t) => Math.round(t.post_to_ready_ms)),
    },
    post_answered_ms: stats(runs.map((t) => t.post_answered_ms)),
    keeper_cpu_s: cpu('keeper'),
    keeper_children_cpu_s: cpu('keeperChildren'),
    souls_cpu_s: cpu('souls'),
    souls_children_cpu_s: cpu('soulsChildren'),
    temporal_server_cpu_s: cpu('temporal'),
    postgres_cpu_s: cpu('postgres'),
    host_statuses: hostStatuses,
    expected_host_status: expect,
    where_time_goes_median_ms: roundAll(medianRecord(segments)),
    temporal_median_ms: roundAll(medianRecord(workflows)),
  };
}

function roundAll<T>(x: T): T {
  if (typeof x === 'number') return round(x, 0) as T;
  if (x && typeof x === 'object') return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, roundAll(v)])) as T;
  return x;
}

async function measureSize(rig: Rig, n: number): Promise<Record<string, unknown>> {
  const name = `fleet-n${n}`;
  const reps = repsFor(n);
  const input = (tag: string) => ({
    root: path.join(rig.root, 'out', `${name}-${tag}`),
    package: PACKAGE,
    message: 'bench',
  });
  const loadStart = round(os.loadavg()[0]!);
  const first = await timedRun(rig, name, `N=${n} first run`, () =>
    api(rig.k, 'POST', '/v1/incarnations', { name, service: 'fleet', covens: [`n${n}`], input: input('first') }),
  );
  progress(
    `N=${n} first run (creates the incarnation): ${(first.post_to_ready_ms / 1000).toFixed(3)} s; measuring the keeper's idle database rate (${(2 * FLUSH_MS) / 1000} s)`,
  );
  await sleep(FLUSH_MS);
  const i0 = await rig.db.snapshot();
  await sleep(FLUSH_MS);
  const idle = idleRate(i0, await rig.db.snapshot());
  const change = await batch(rig, name, n, 'change', reps, (r) => input(`r${r}`), idle);
  const noop = await batch(rig, name, n, 'no-op', reps, () => input(`r${reps}`), idle);
  const rss = rig.souls.pids().map(rssMb);
  return {
    n,
    repetitions: reps,
    loadavg_1m_start: loadStart,
    loadavg_1m_end: round(os.loadavg()[0]!),
    // The souls' first run loads their state modules and opens their ledgers: their CPU shows it.
    first_run: {
      post_to_ready_ms: Math.round(first.post_to_ready_ms),
      keeper_cpu_s: round(first.cpu.keeper!),
      keeper_children_cpu_s: round(first.cpu.keeperChildren!),
      souls_cpu_s: round(first.cpu.souls!),
      souls_children_cpu_s: round(first.cpu.soulsChildren!),
    },
    change_run: {
      ...(await summarize(rig, name, n, change.runs, 'changed')),
      db: change.db,
      loadavg_1m_end: change.loadavg_1m,
    },
    noop_run: { ...(await summarize(rig, name, n, noop.runs, 'ok')), db: noop.db, loadavg_1m_end: noop.loadavg_1m },
    keeper_idle_db_transactions_per_s: round(idle.transactionsPerSecond, 1),
    souls_rss_mb_after_runs: stats(rss, 1),
  };
}

function targets(sizes: Record<number, any>, idle: any) {
  const at = (n: number, run: string) => sizes[n]?.[run]?.post_to_ready_ms?.median as number | undefined;
  const t = (target: number, measured: number | undefined | null, unit: string, n?: number) =>
    n !== undefined && sizes[n]?.failed
      ? {
          target,
          measured: null,
          unit,
          met: false,
          why: `the N=${n} ${sizes[n].failed.run} ended ${sizes[n].failed.status}`,
        }
      : { target, measured: measured ?? null, unit, met: measured == null ? null : measured <= target };
  const seconds = (ms: number | undefined) => (ms === undefined ? undefined : round(ms / 1000));
  return {
    change_100_souls: t(1.0, seconds(at(100, 'change_run')), 's (median)', 100),
    noop_100_souls: t(0.8, seconds(at(100, 'noop_run')), 's (median)', 100),
    change_1_soul: t(150, at(1, 'change_run'), 'ms (median)', 1),
    noop_1_soul: t(150, at(1, 'noop_run'), 'ms (median)', 1),
    idle_soul_rss: t(45, idle?.rss_mb, 'MB'),
    soul_run_connected: t(
      300,
      idle?.soul_run_to_registry_connected_ms?.median,
      'ms (median, registry shows connected)',
    ),
    soul_process_connected: t(
      300,
      idle?.soul_process_to_welcome_ms?.median,
      "ms (median, the soul's own process start to its Welcome)",
    ),
  };
}
/** Writes bench/results/fleet.json; false when a size failed (its results then say why, and larger sizes are not tried). */
async function main(): Promise<boolean> {
  const sizes = sizesFromArgs([1, 10, 100]);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-fleet-'));
  const out = path.join(repoRoot(), 'bench', 'results', 'fleet.json');
  const machine = {
    cpus: os.cpus().length,
    cpu_model: os.cpus()[0]?.model,
    memory_gb: Math.round(os.totalmem() / 2 ** 30),
    loadavg_start: os.loadavg().map((x) => round(x)),
  };
  const rig: Partial<Rig> & { root: string } = { root };
  let ok = true;
  // Whatever ends this process, no soul is left running (keeper database and secret cleaned too).
  const guard = guardRig(rig, () => cleanup(rig), progress);
  try {
    progress(`starting a keeper; sizes ${sizes.join(' ')}`);
    const r = await startRig(rig);

    const url = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'fleet'),
      path.join(root, 'fleet.git'),
      'v1',
    );
    const svc = await api(r.k, 'POST', '/v1/services', { name: 'fleet', git: url, ref: 'v1' });
    if (svc.status !== 201) throw new Error(`POST /v1/services: ${svc.status} ${JSON.stringify(svc.body)}`);

    const [firstSoul] = await grow(r, { from: 0, to: 1, sizes }, 'fleet', progress);
    const idle = await idleSoul(r, firstSoul!);
    const results: Record<number, Record<string, unknown>> = {};
    let have = 1;
    for (const n of sizes) {
      let onboarding: Record<string, unknown> | undefined;
      if (n > have) {
        const t0 = Date.now();
        const started = await grow(r, { from: have, to: n, sizes }, 'fleet', progress);
        await waitFor(`${n} souls connected`, async () => (await connectedCount(r, `n${n}`)) >= n, 300_000, 250);
        await waitFor(
          'every connected log line',
          async () => started.every((s) => s.connectedAt !== undefined),
          30_000,
          50,
        );
        onboarding = {
          souls: n - have,
          seconds: round((Date.now() - t0) / 1000, 1),
          concurrency: ONBOARD_CONCURRENCY,
          soul_run_to_welcome_ms: {
            ...stats(started.map((s) => s.connectedAt! - s.spawnedAt)),
            what: `while onboarding ${ONBOARD_CONCURRENCY} at a time`,
          },
        };
        progress(`N=${n}: all ${n} souls connected in ${onboarding.seconds} s; settling 10 s`);
        have = n;
        // The last souls started are still finishing their start-up (facts, first heartbeats).
        await sleep(10_000);
      }
      try {
        results[n] = { ...(await measureSize(r, n)), ...(onboarding ? { onboarding } : {}) };
        console.log(JSON.stringify(results[n]));
      } catch (err) {
        if (!(err instanceof RunFailed)) throw err;
        progress(`${err.message}; not trying larger sizes`);
        results[n] = {
          n,
          failed: err.summary,
          loadavg_1m: round(os.loadavg()[0]!),
          ...(onboarding ? { onboarding } : {}),
        };
        ok = false;
        break;
      }
    }
    const doc = {
      benchmark: 'fleet',
      date: new Date().toISOString(),
      machine: { ...machine, loadavg_end: os.loadavg().map((x) => round(x)) },
      keeper:
        'its own process (bin/keeper run): keeper_cpu_s is that process, keeper_children_cpu_s its exited children (git); reaper.lease_ttl 15s (100 souls share two cores), logging warn',
      measured: {
        post_to_ready_ms:
          'POST of the run -> the incarnation `ready` in PostgreSQL, polled every 10 ms (post_answered_ms: POST -> its 202)',
        cpu_s:
          'per run, /proc utime+stime delta; souls: the N `soul run` processes (souls_children: their exited children such as dpkg-query); temporal_server and postgres are shared with other work on the machine',
        db: "keeper database transactions (pg_stat_database xact_commit + xact_rollback; pg_stat_statements not loaded) per run per host, the idle rate and the benchmark's own queries taken off; rows written = tup_inserted + tup_updated + tup_deleted",
        where_time_goes_median_ms:
          "from the run report: created_at, finished_at, and the steps' started_at/finished_at as the souls measured them",
      },
      idle_soul: idle,
      sizes: Object.values(results),
      targets: targets(results, idle),
    };
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, JSON.stringify(doc, null, 2) + '\n');
    progress(`wrote ${out}`);
    return ok;
  } finally {
    await guard.finish();
  }
}

main().then(
  (ok) => process.exit(ok ? 0 : 1),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
