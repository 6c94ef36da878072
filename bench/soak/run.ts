// Benchmark (not a test): the soak of issue 36, bench/soak/soak.ts says what it drives and samples.
//   node dist/bench/soak/run.js [--runs N] [--souls N] [--drift 2s] [--plans-every S] [--force-gc]
//     [--heap-snapshots DIR]  (implies --force-gc: the keeper's heap snapshot at the middle and the end)
// Writes bench/results/soak.json (soak-forced-gc.json with --force-gc: options, counts, every
// sample, the verdicts, a summary line per process) and exits 1 when a judged footprint grew without
// bound (analyse.ts: a slope over the second half above its threshold, or a store's bytes per unit of
// work above the documented figure). A heap that was `not judged` (too few full collections) does
// not fail it; its process's summary line says so.
// Needs `make stack` and `make build`; run as root (the souls are in UTS namespaces, bench/fleet/souls.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from '../../test/support/repo';
import { runSoak } from './soak';
import { LONG_SOAK } from './soak-options';

async function main(): Promise<boolean> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string' },
      souls: { type: 'string' },
      drift: { type: 'string' },
      'plans-every': { type: 'string' },
      'force-gc': { type: 'boolean' },
      'heap-snapshots': { type: 'string' },
    },
  });
  const o = {
    ...LONG_SOAK,
    ...(values.runs ? { runs: Number(values.runs) } : {}),
    ...(values.souls ? { souls: Number(values.souls) } : {}),
    ...(values.drift ? { driftInterval: values.drift } : {}),
    ...(values['plans-every'] ? { planEverySec: Number(values['plans-every']) } : {}),
    ...(values['force-gc'] ? { forceGc: true } : {}),
    ...(values['heap-snapshots'] ? { forceGc: true, heapSnapshotDir: path.resolve(values['heap-snapshots']) } : {}),
    progress: (line: string) => process.stderr.write(`soak: ${line}\n`),
  };
  const machine = {
    cpus: os.cpus().length,
    cpu_model: os.cpus()[0]?.model,
    memory_gb: Math.round(os.totalmem() / 2 ** 30),
    loadavg_start: os.loadavg(),
  };
  if (o.heapSnapshotDir) fs.mkdirSync(o.heapSnapshotDir, { recursive: true });
  const result = await runSoak(o);
  const out = path.join(repoRoot(), 'bench', 'results', o.forceGc ? 'soak-forced-gc.json' : 'soak.json');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(
    out,
    JSON.stringify(
      {
        benchmark: 'soak',
        date: new Date().toISOString(),
        machine: { ...machine, loadavg_end: os.loadavg() },
        ...result,
      },
      null,
      2,
    ) + '\n',
  );
  for (const line of result.summary) process.stderr.write(`soak: ${line}\n`);
  process.stderr.write(`soak: per unit ${JSON.stringify(result.per_unit)}\nsoak: wrote ${out}\n`);
  return result.ok;
}

main().then(
  (ok) => process.exit(ok ? 0 : 1),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
