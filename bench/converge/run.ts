// Benchmark (not a test): N new hosts added to a coven converge in one run (issue 30).
//   node dist/bench/converge/run.js [N ...]   (default: 8 100)
// Per N: a fresh keeper (`bin/keeper run`, its own process, database and queue), BASE + N swarm
// souls in this process (bench/fanout/swarm-threads.ts: each soul its own TLS stream and certificate,
// answering every step as already satisfied). The BASE souls carry coven `bench`; the N others
// carry coven `spare` and have converged (no incarnation of theirs). An incarnation of a three-step
// service on `bench` is created and `ready` on the BASE souls. Then the N souls gain coven `bench` in
// one statement (what PATCH /v1/souls/{sid} does per soul: covens and converged_at cleared, db/repos/
// convergence.ts changeCovens), as a bulk change would; the clock runs from that statement until
// every one of the N is a host of a succeeded run of the incarnation and it is `ready` again.
// Reports the seconds, the runs the converger created (issue 30: 1) with their hosts, and the
// keeper's CPU seconds. Writes bench/results/converge.json. Needs the stack (KEEPER_STACK_DIR).
//
// Why one statement and not N PATCH calls: the converger looks every second (runs/converge.ts
// CONVERGE_EVERY_MS); N calls that straddle a look are two looks' worth of souls, hence two runs
// (the second waits for the first; connected souls are not "on their way", runs/converge-gather.ts,
// so nothing is gathered). The bench measures the converger, not the PATCH loop.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../../test/support/repo';
import { gitRepoFrom } from '../../test/runs/keeper';
import { cpuTimes } from '../fleet/proc';
import { startSwarmKeeper, waitFor } from '../swarm-keeper';

const BASE = 10;
const round = (x: number) => Math.round(x * 100) / 100;

/** A three-step service (three files per host, answered by the swarm) in a new local git repository. */
function serviceRepo(dir: string): string {
  const src = `${dir}.src`;
  fs.mkdirSync(path.join(src, 'scenario', 'create'), { recursive: true });
  fs.writeFileSync(path.join(src, 'service.yml'), 'name: converge\nstate_schema_version: 1\n');
  const task = (name: string) => `  - name: ${name}
    module: core.file.present
    params:
      path: "/var/lib/converge-bench/\${soulprint.self.fqdn}/${name}"
      content: "${name}\\n"
      mode: "0644"
`;
  fs.writeFileSync(
    path.join(src, 'scenario', 'create', 'main.yml'),
    `description: Three files per host.\ntasks:\n${task('a')}${task('b')}${task('c')}`,
  );
  return gitRepoFrom(src, dir, 'v1');
}

async function runOnce(n: number, threads: number): Promise<Record<string, unknown>> {
  const sid = (kind: string, i: number) => `conv-${kind}-${String(i).padStart(4, '0')}.keeper.test`;
  const base = Array.from({ length: BASE }, (_, i) => sid('base', i));
  const fresh = Array.from({ length: n }, (_, i) => sid('new', i));
  // The new ones carry only `spare` and have converged already: nothing to bring in until the change.
  const rig = await startSwarmKeeper({
    souls: [
      ...base.map((s) => ({ sid: s, covens: ['bench'] })),
      ...fresh.map((s) => ({ sid: s, covens: ['spare'], converged: true })),
    ],
    real: false,
    threads,
  });
  const { api, core, keeper, swarm, root } = rig;
  try {
    const reg = await api('POST', '/v1/services', {
      name: 'converge',
      git: serviceRepo(path.join(root, 'svc')),
      ref: 'v1',
    });
    if (reg.status !== 201) throw new Error(`POST /v1/services: ${reg.status} ${JSON.stringify(reg.body)}`);
    const created = await api('POST', '/v1/incarnations', {
      name: 'conv-bench',
      service: 'converge',
      covens: ['bench'],
    });
    if (created.status !== 202) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
    const settled = () =>
      waitFor(
        'the incarnation to settle',
        async () => {
          const g = await api('GET', '/v1/incarnations/conv-bench');
          return g.body.status !== 'applying' ? g.body : undefined;
        },
        600_000,
      );
    if ((await settled()).status !== 'ready') {
      const rep = (await api('GET', `/v1/incarnations/conv-bench/runs/${created.body.apply_id}`)).body;
      throw new Error(
        `the create run did not end ready: ${rep.error} ${JSON.stringify(rep.hosts?.[0] ?? rep.render_errors)}`,
      );
    }

    // The coven change: N souls gain `bench` at once.
    const cpu0 = cpuTimes(keeper.pid!).self;
    const t0 = Date.now();
    await core
      .db('souls')
      .whereIn('sid', fresh)
      .update({ covens: ['spare', 'bench'], converged_at: null });
    const runs = await waitFor(
      `${n} new hosts converged`,
      async () => {
        const list = (await api('GET', '/v1/incarnations/conv-bench/runs?limit=100')).body.items as any[];
        const converge = list.filter((r) => Array.isArray(r.target_sids));
        const reached = new Set(converge.filter((r) => r.status === 'succeeded').flatMap((r) => r.target_sids));
        if (!fresh.every((s) => reached.has(s))) return undefined;
        const inc = (await api('GET', '/v1/incarnations/conv-bench')).body;
        return inc.status === 'ready' ? converge : undefined;
      },
      600_000,
    );
    const seconds = (Date.now() - t0) / 1000;
    const cpu = cpuTimes(keeper.pid!).self - cpu0;
    const reports = await Promise.all(
      runs.map(async (r) => (await api('GET', `/v1/incarnations/conv-bench/runs/${r.apply_id}`)).body),
    );
    const hosts = reports.flatMap((r) => r.hosts.filter((h: any) => h.status === 'ok' || h.status === 'changed'));
    if (new Set(hosts.map((h: any) => h.sid)).size !== n)
      throw new Error(`the converge runs reached ${hosts.length} hosts, not ${n}`);
    return {
      n,
      base_hosts: BASE,
      coven_change_to_ready_seconds: round(seconds),
      runs_created: runs.length,
      hosts_per_run: reports.map((r) => r.hosts.length),
      run_seconds: reports.map((r) => round((Date.parse(r.finished_at) - Date.parse(r.created_at)) / 1000)),
      keeper_cpu_seconds: round(cpu),
      swarm_threads: swarm.size,
      loadavg_1m: round(os.loadavg()[0]!),
    };
  } finally {
    await rig.close();
  }
}

async function main(): Promise<void> {
  const ns = process.argv
    .slice(2)
    .map(Number)
    .filter((x) => x > 0);
  const sizes = ns.length ? ns : [8, 100];
  const threads = os.cpus().length;
  const results: Record<string, unknown>[] = [];
  for (const n of sizes) {
    const r = await runOnce(n, threads);
    console.log(JSON.stringify(r));
    results.push(r);
  }
  const out = path.join(repoRoot(), 'bench', 'results', 'converge.json');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(
    out,
    `${JSON.stringify({ benchmark: 'converge', machine: `${os.cpus().length} cpus, shared`, date: new Date().toISOString(), runs: results }, null, 2)}\n`,
  );
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
