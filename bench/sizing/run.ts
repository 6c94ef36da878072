// Benchmark (not a test): what a run over N hosts costs each part of a cluster, for the sizing table
// of docs/production.md (issue 33).
//   node --max-old-space-size=8192 dist/bench/sizing/run.js [--runs=K] [N ...]   (default: K 3, N 1000)
// Per N: a fresh keeper (`bin/keeper run`, its own process, database and queue) and N swarm souls in
// this process applying their steps with the soul's own step handler (bench/swarm-keeper.ts, real
// modules): test/fixtures/services/fleet (a package, a 0600 file, a rendered file per host). The
// create run, then K no-op runs (the same input) and K change runs (a new input.root: two files
// written per host). Per run kind it reports, as medians and means over the K runs:
// - the keeper: CPU seconds (/proc/<pid>/stat) and its RSS after the runs;
// - Temporal: workflows, history events, history bytes (protobuf, parent and children) and actions;
// - PostgreSQL: rows and bytes added to the keeper's database per run (pg_total_relation_size of
//   every table, before and after the K runs, divided by K), and which tables they went to.
// Writes bench/results/sizing.json. Needs the stack (KEEPER_STACK_DIR).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import type { Knex } from 'knex';
import { repoRoot } from '../../test/support/repo';
import { connectStackTemporal } from '../../test/support/temporal-client';
import { fleetRepo } from '../fanout/fleet';
import { cpuTimes, rssMb } from '../fleet/proc';
import { startSwarmKeeper, waitFor } from '../swarm-keeper';
import { temporalCost, type TemporalCost } from '../temporal-cost';

const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Rows and bytes of every table of the keeper's database. */
async function tableSizes(db: Knex): Promise<Map<string, { rows: number; bytes: number }>> {
  const tables = (
    await db.raw<{ rows: { t: string }[] }>(
      "select tablename as t from pg_tables where schemaname = 'public' and tablename not like 'knex_%'",
    )
  ).rows.map((r) => r.t);
  const out = new Map<string, { rows: number; bytes: number }>();
  for (const t of tables) {
    const [{ n }] = (await db.raw<{ rows: { n: string }[] }>('select count(*) as n from ??', [t])).rows;
    const [{ b }] = (await db.raw<{ rows: { b: string }[] }>('select pg_total_relation_size(?::regclass) as b', [t]))
      .rows;
    out.set(t, { rows: Number(n), bytes: Number(b) });
  }
  return out;
}

function growth(before: Map<string, { rows: number; bytes: number }>, after: typeof before, k: number) {
  const per: Record<string, { rows: number; bytes: number }> = {};
  let rows = 0;
  let bytes = 0;
  for (const [t, a] of after) {
    const b = before.get(t) ?? { rows: 0, bytes: 0 };
    const d = { rows: (a.rows - b.rows) / k, bytes: (a.bytes - b.bytes) / k };
    rows += d.rows;
    bytes += d.bytes;
    if (d.rows !== 0 || d.bytes !== 0) per[t] = { rows: round(d.rows, 1), bytes: Math.round(d.bytes) };
  }
  return { rows_per_run: round(rows, 1), bytes_per_run: Math.round(bytes), tables: per };
}

async function runOnce(n: number, k: number, client: Client): Promise<Record<string, unknown>> {
  const sids = Array.from({ length: n }, (_, i) => `size-${String(i).padStart(6, '0')}.keeper.test`);
  const rig = await startSwarmKeeper({ souls: sids.map((sid) => ({ sid, covens: ['bench'] })), real: true });
  const { api, core, keeper, root } = rig;
  try {
    const reg = await api('POST', '/v1/services', {
      name: 'fleet',
      git: fleetRepo(path.join(root, 'fleet')),
      ref: 'v1',
    });
    if (reg.status !== 201) throw new Error(`POST /v1/services: ${reg.status} ${JSON.stringify(reg.body)}`);
    const settle = async (applyId: string) => {
      const inc = await waitFor(
        'the run to settle',
        async () => {
          const g = await api('GET', '/v1/incarnations/sizing');
          return g.body.status !== 'applying' ? g.body : undefined;
        },
        900_000,
        100,
      );
      if (inc.status !== 'ready') {
        const rep = (await api('GET', `/v1/incarnations/sizing/runs/${applyId}`)).body;
        throw new Error(`run ${applyId} ended ${inc.status}: ${rep.error ?? JSON.stringify(rep.hosts?.[0])}`);
      }
    };
    const created = await api('POST', '/v1/incarnations', {
      name: 'sizing',
      service: 'fleet',
      covens: ['bench'],
      input: { root: path.join(root, 'hosts-0') },
    });
    if (created.status !== 202) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
    await settle(created.body.apply_id);

    const kinds: Record<string, unknown> = {};
    let roots = 0;
    for (const kind of ['no-op', 'change'] as const) {
      const cpu: number[] = [];
      const seconds: number[] = [];
      const costs: TemporalCost[] = [];
      const before = await tableSizes(core.db);
      for (let i = 0; i < k; i++) {
        const input = { root: path.join(root, `hosts-${kind === 'change' ? ++roots : roots}`) };
        const cpu0 = cpuTimes(keeper.pid!).self;
        const t0 = Date.now();
        const r = await api('POST', '/v1/incarnations/sizing/runs', { operation: 'create', input });
        if (r.status !== 202) throw new Error(`run: ${r.status} ${JSON.stringify(r.body)}`);
        await settle(r.body.apply_id);
        seconds.push((Date.now() - t0) / 1000);
        cpu.push(cpuTimes(keeper.pid!).self - cpu0);
        costs.push(await temporalCost(client, r.body.apply_id));
      }
      const after = await tableSizes(core.db);
      const mean = (f: (c: TemporalCost) => number) => round(costs.reduce((s, c) => s + f(c), 0) / k, 1);
      kinds[kind] = {
        seconds_median: round(median(seconds)),
        keeper_cpu_seconds_median: round(median(cpu)),
        keeper_cpu_ms_per_host: round((median(cpu) * 1000) / n, 3),
        temporal: {
          workflows: mean((c) => c.workflows),
          history_events: mean((c) => c.history_events),
          history_bytes: mean((c) => c.history_bytes),
          actions: mean((c) => c.actions),
        },
        postgres: growth(before, after, k),
      };
    }
    const result = {
      n,
      runs_per_kind: k,
      ...kinds,
      keeper_rss_mb_after: round(rssMb(keeper.pid!), 0),
      database_bytes_total: [...(await tableSizes(core.db)).values()].reduce((s, t) => s + t.bytes, 0),
      loadavg_1m: round(os.loadavg()[0]!),
    };
    return result;
  } finally {
    await rig.close();
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const kArg = args.find((a) => a.startsWith('--runs='));
  const k = kArg ? Number(kArg.slice('--runs='.length)) : 3;
  if (!Number.isInteger(k) || k < 1) throw new Error(`--runs must be a whole number from 1, got ${kArg}`);
  const ns = args.map(Number).filter((x) => x > 0);
  const connection = await connectStackTemporal();
  const results: Record<string, unknown>[] = [];
  try {
    const client = new Client({ connection, namespace: 'default' });
    for (const n of ns.length ? ns : [1000]) {
      const r = await runOnce(n, k, client);
      console.log(JSON.stringify(r));
      results.push(r);
    }
  } finally {
    await connection.close();
  }
  const out = path.join(repoRoot(), 'bench', 'results', 'sizing.json');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(
    out,
    `${JSON.stringify({ benchmark: 'sizing', machine: `${os.cpus().length} cpus, shared`, date: new Date().toISOString(), runs: results }, null, 2)}\n`,
  );
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
