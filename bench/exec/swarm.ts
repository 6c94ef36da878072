// Benchmark (not a test): `exec --cmd -- true` on the swarm (issue 34), hundreds to a thousand hosts
// on two cores.
//   node dist/bench/exec/swarm.js [N ...]   (default: 1000)
// Per N: a keeper as its own process and N swarm souls in this process (bench/swarm-keeper.ts) that
// apply their steps with the soul's own step handler: every host really runs `true` (a process per
// host, as a real soul would) and records it in a ledger of its own. Then REPS executions of
// core.cmd.run argv [true] on the coven, each followed through its SSE as keeperctl follows it:
// POST -> 202, first and last `host` event, `end`; and the keeper's CPU seconds per execution.
// bench/exec/run.js measures the same on real soul processes (100 at most here: each is a node).
// Writes bench/results/exec-swarm.json. Needs the stack (KEEPER_STACK_DIR) and a build.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../../test/support/repo';
import { cpuTimes } from '../fleet/proc';
import { median } from '../fleet/timeline';
import { startSwarmKeeper } from '../swarm-keeper';
import { timeExecution } from './time-execution';

const REPS = 3;
const round = (x: number, d = 0) => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : null);

async function runOnce(n: number): Promise<Record<string, unknown>> {
  const sid = (i: number) => `exec-swarm-${String(i).padStart(4, '0')}.keeper.test`;
  const rig = await startSwarmKeeper({
    souls: Array.from({ length: n }, (_, i) => ({ sid: sid(i), covens: ['swarm'], converged: true })),
    real: true,
  });
  try {
    await timeExecution(rig, 'swarm', n); // warm-up: the first execution loads the workflow code and opens pools
    const runs: { answered: number; first: number; last: number; ended: number; keeper_cpu_s: number }[] = [];
    for (let i = 0; i < REPS; i++) {
      const cpu0 = cpuTimes(rig.keeper.pid!).self;
      const t = await timeExecution(rig, 'swarm', n);
      runs.push({ ...t, keeper_cpu_s: cpuTimes(rig.keeper.pid!).self - cpu0 });
      process.stderr.write(`exec-swarm: ${n} hosts, end after ${Math.round(t.ended)} ms\n`);
    }
    const med = (pick: (r: (typeof runs)[number]) => number, d = 0) => round(median(runs.map(pick)), d);
    return {
      hosts: n,
      reps: REPS,
      post_to_202_ms: med((r) => r.answered),
      post_to_first_result_ms: med((r) => r.first),
      post_to_last_result_ms: med((r) => r.last),
      post_to_end_ms: med((r) => r.ended),
      keeper_cpu_seconds: med((r) => r.keeper_cpu_s, 2),
      keeper_cpu_ms_per_host: med((r) => (r.keeper_cpu_s * 1000) / n, 2),
      runs: runs.map((r) => ({
        ...r,
        answered: round(r.answered),
        first: round(r.first),
        last: round(r.last),
        ended: round(r.ended),
      })),
      swarm_threads: rig.swarm.size,
      loadavg_1m: round(os.loadavg()[0]!, 1),
    };
  } finally {
    await rig.close();
  }
}

async function main(): Promise<void> {
  const ns = process.argv
    .slice(2)
    .map(Number)
    .filter((x) => Number.isInteger(x) && x > 0);
  const results: Record<string, unknown>[] = [];
  for (const n of ns.length ? ns : [1000]) {
    const r = await runOnce(n);
    console.log(JSON.stringify(r));
    results.push(r);
  }
  const out = path.join(repoRoot(), 'bench', 'results', 'exec-swarm.json');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(
    out,
    `${JSON.stringify({ benchmark: 'exec-swarm', machine: `${os.cpus().length} cpus, shared`, date: new Date().toISOString(), results }, null, 2)}\n`,
  );
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
