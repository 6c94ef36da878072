// Benchmark (not a test): `exec --cmd -- true` on N real souls (issue 34), time to the last result.
//   node dist/bench/exec/run.js [N ...]   (default: 10 50)
// One keeper as its own process (bin/keeper run, its own database, secret, queue and ports); souls are
// real `soul init` + `soul run` processes (bench/fleet/souls.ts: each in its own UTS namespace named
// after its SID), grown to each N in turn (a soul carries coven `n<N>` of every size it belongs to).
// Per N, REPS times: POST /v1/executions (core.cmd.run argv [true], confirm) and follow its events
// (SSE, as keeperctl does): POST -> 202, POST -> the first and the last `host` event, POST -> `end`.
// Then once: `keeperctl exec --coven n<N> --yes --cmd -- true` as an operator types it, wall time
// including node's start-up. Figures on stdout and in bench/results/exec.json. Needs the stack and a
// build; run as root (unshare).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { endpointOf, waitFor } from '../../test/agents/harness';
import { spawnKeeper } from '../../test/runs/keeper';
import { repoRoot } from '../../test/support/repo';
import { median } from '../fleet/timeline';
import { SoulProcesses } from '../fleet/souls';
import {
  cleanupRig,
  connectedCount,
  grow,
  guardRig,
  initBenchKeeper,
  sizesFromArgs,
  type SoulRig as Rig,
} from '../support/rig';
import { timeExecution } from './time-execution';

const REPS = 5;
const round = (x: number, d = 0) => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : null);
const progress = (line: string) => process.stderr.write(`exec: ${line}\n`);
const stats = (xs: number[]) => ({ median: round(median(xs)), max: round(Math.max(...xs)) });

/** `keeperctl exec --yes --cmd -- true` on the coven: wall time of the command, node start-up included. */
function keeperctl(rig: Rig, n: number): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [path.join(repoRoot(), 'bin', 'keeperctl'), 'exec', '--coven', `n${n}`, '--yes', '--cmd', '--', 'true'],
      {
        env: { PATH: process.env['PATH'], HOME: rig.root, KEEPER_URL: rig.k.baseUrl, KEEPER_TOKEN: rig.k.adminToken },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.on('close', (code) => {
      if (code === 0 && new RegExp(`^ok 0, changed ${n}, failed 0, unknown 0$`, 'm').test(out))
        resolve(performance.now() - t0);
      else reject(new Error(`keeperctl exec exited ${code}: ${out.slice(-2000)}`));
    });
  });
}

async function main(): Promise<void> {
  const sizes = sizesFromArgs([10, 50]);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-exec-'));
  const rig: Partial<Rig> = { root };
  const guard = guardRig(rig, () => cleanupRig(rig), progress);
  const loadStart = os.loadavg().map((x) => round(x, 2));
  try {
    rig.k = await initBenchKeeper(); // its 15 s lease: N souls share two cores with the keeper here
    rig.keeper = await spawnKeeper(rig.k);
    rig.souls = new SoulProcesses(path.join(root, 'souls'), endpointOf(rig.k));
    const r = rig as Rig;
    const results: Record<string, unknown>[] = [];
    let have = 0;
    for (const n of sizes) {
      await grow(r, { from: have, to: n, sizes }, 'exec', progress);
      await waitFor(`${n} souls connected`, async () => (await connectedCount(r, `n${n}`)) >= n, 600_000, 250);
      have = n;
      progress(`N=${n}: every soul connected; settling 5 s`);
      await new Promise((res) => setTimeout(res, 5000));
      await timeExecution(r.k, `n${n}`, n); // warm-up: the first execution loads the workflow code and opens pools
      const runs = [];
      for (let i = 0; i < REPS; i++) runs.push(await timeExecution(r.k, `n${n}`, n));
      const cli = await keeperctl(r, n);
      const row = {
        n,
        reps: REPS,
        post_answered_ms: stats(runs.map((x) => x.answered)),
        first_result_ms: stats(runs.map((x) => x.first)),
        last_result_ms: stats(runs.map((x) => x.last)),
        end_event_ms: stats(runs.map((x) => x.ended)),
        keeperctl_wall_ms: round(cli),
        loadavg_1m: round(os.loadavg()[0]!, 2),
      };
      console.log(JSON.stringify(row));
      results.push(row);
    }
    const out = path.join(repoRoot(), 'bench', 'results', 'exec.json');
    fs.mkdirSync(path.dirname(out), { recursive: true });
    const doc = {
      benchmark: 'exec',
      date: new Date().toISOString(),
      machine: {
        cpus: os.cpus().length,
        cpu_model: os.cpus()[0]?.model,
        memory_gb: Math.round(os.totalmem() / 2 ** 30),
        loadavg_start: loadStart,
        loadavg_end: os.loadavg().map((x) => round(x, 2)),
        note: 'the keeper, the souls, PostgreSQL and the Temporal dev server share the machine (and other work on it)',
      },
      measured: {
        what: 'POST /v1/executions {module: core.cmd.run, params: {argv: [true]}, target: {covens: [n<N>]}} on N connected souls, followed over SSE',
        post_answered_ms: 'POST -> its 202 (selection, audit record, workflow started)',
        first_result_ms: 'POST -> the first `host` event on the stream',
        last_result_ms: 'POST -> the last `host` event: every host has answered',
        end_event_ms: 'POST -> the `end` event with the summary',
        keeperctl_wall_ms: '`keeperctl exec --coven n<N> --yes --cmd -- true`, wall time including node start-up',
      },
      sizes: results,
    };
    fs.writeFileSync(out, JSON.stringify(doc, null, 2) + '\n');
    progress(`wrote ${out}`);
  } finally {
    await guard.finish();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
