// Benchmark of the Operator API's hottest reads (issue 3): GET /v1/souls/{sid} and
// GET /v1/souls?limit=100 with 10,000 registered souls, 50 concurrent clients, keep-alive.
// Not a test. Run: `npm run build && node dist/bench/api/run.js` (the stack must be up);
// writes bench/results/api.json. Target: p99 under 20 ms on the project's 2-core machine.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { connectDb } from '../../db/connect';
import { migrateLatest } from '../../db/migrate';
import { encodeCursor } from '../../api/pagination';
import { createTestDatabase } from '../../test/support/database';
import { startTestKeeper } from '../../test/support/keeper';
import { repoRoot } from '../../test/support/repo';
import { runLoad, type LoadResult, type LoadSpec } from './load';

const SOULS = Number(process.env.BENCH_SOULS ?? 10_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 50);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 10_000);
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 2_000);
const TARGET_P99_MS = 20;

function sidOf(i: number): string {
  return `host-${String(i).padStart(5, '0')}.bench.example.com`;
}

/** Inserts the souls directly (the API path is not what is measured), in batches. */
async function seed(dsn: string): Promise<void> {
  const db = connectDb(dsn, { poolMax: 2 });
  try {
    await migrateLatest(db);
    for (let i = 0; i < SOULS; i += 1000) {
      const rows = Array.from({ length: Math.min(1000, SOULS - i) }, (_, k) => ({
        sid: sidOf(i + k),
        transport: 'agent',
        covens: ['bench', (i + k) % 2 ? 'odd' : 'even'],
        status: 'pending',
      }));
      await db('souls').insert(rows);
    }
  } finally {
    await db.destroy();
  }
}

function inWorker(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const w = new Worker(__filename, { workerData: spec });
    w.once('message', resolve);
    w.once('error', reject);
  });
}

async function main(): Promise<void> {
  const db = await createTestDatabase('bench');
  await seed(db.dsn);
  const tk = await startTestKeeper({ db });
  try {
    const sids = Array.from({ length: SOULS }, (_, i) => sidOf(i));
    const common = {
      baseUrl: tk.baseUrl,
      token: tk.adminToken,
      concurrency: CONCURRENCY,
      warmupMs: WARMUP_MS,
      durationMs: DURATION_MS,
    };
    const results: (LoadResult & { loadavg_1m_before: number })[] = [];
    // The machine is shared: the 1-minute load average just before each scenario goes into the JSON.
    const measure = async (spec: LoadSpec) => {
      const loadavg_1m_before = Math.round(os.loadavg()[0]! * 100) / 100;
      results.push({ ...(await inWorker(spec)), loadavg_1m_before });
    };
    await measure({ ...common, name: 'GET /v1/souls/{sid}', paths: sids.map((s) => `/v1/souls/${s}`) });
    // Pages start at random points of the registry, so the database does real keyset scans.
    const starts = sids.filter((_, i) => i % 97 === 0 && i < SOULS - 100);
    await measure({
      ...common,
      name: 'GET /v1/souls?limit=100',
      paths: ['/v1/souls?limit=100', ...starts.map((s) => `/v1/souls?limit=100&cursor=${encodeCursor(s)}`)],
    });
    const report = {
      benchmark: 'api',
      date: new Date().toISOString(),
      souls: SOULS,
      concurrency: CONCURRENCY,
      target_p99_ms: TARGET_P99_MS,
      machine: {
        cpus: os.cpus().length,
        cpu: os.cpus()[0]?.model ?? 'unknown',
        node: process.version,
        loadavg_1m: os.loadavg()[0],
      },
      scenarios: results.map((r) => ({ ...r, meets_target: r.p99_ms < TARGET_P99_MS })),
    };
    const out = path.join(repoRoot(), 'bench', 'results', 'api.json');
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, JSON.stringify(report, null, 2) + '\n');
    for (const r of report.scenarios) {
      process.stdout.write(
        `${r.name} (load ${r.loadavg_1m_before}): ${r.rps} req/s, p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms, errors ${r.errors} (${r.meets_target ? 'meets' : 'misses'} p99 < ${TARGET_P99_MS} ms)\n`,
      );
    }
    process.stdout.write(`written to ${out}\n`);
  } finally {
    await tk.stop();
  }
}

if (isMainThread) {
  main().catch((err) => {
    process.stderr.write(`bench/api: ${(err as Error).message}\n`);
    process.exit(1);
  });
} else {
  runLoad(workerData as LoadSpec).then((r) => parentPort!.postMessage(r));
}
