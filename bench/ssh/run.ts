// Benchmark (not a test): push mode over SSH to N local sshd hosts.
//   node dist/bench/ssh/run.js [--max-sessions=K] [N ...]   (default: 10 50, K 8)
// Per N: a keeper in this process (test/ssh/rig.ts: its own database and queue, `ssh.soul_command`
// pointing at this checkout's soul), N real sshd instances on 127.0.0.1, each in its own UTS
// namespace named after its SID, each checked once (facts for the first render), and the three-step
// service test/fixtures/services/fleet (a package present, a 0600 file, a rendered 0644 file) from a
// local git repository. Measures POST /v1/incarnations -> `ready` for the run that changes every host
// and for the same run again (no-op), and this process's CPU seconds over each run (the keeper is in
// this process; the hosts' sshd and `soul apply` are not counted) and the whole machine's busy CPU
// seconds (everything: sshd, `soul apply`, Temporal, PostgreSQL, the keeper). Target (issue 15): 50 hosts,
// no-op, under 3 s. Writes bench/results/ssh.json. Needs `make stack` and openssh-server.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../../test/support/repo';
import { gitRepoFrom, settled } from '../../test/runs/keeper';
import { startSshRig } from '../../test/ssh/rig';
import { machineBusySeconds } from '../fleet/proc';
import { pool } from '../pool';

const round = (x: number) => Math.round(x * 100) / 100;
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

async function runOnce(n: number, maxSessions: number): Promise<Record<string, unknown>> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-ssh-'));
  const rig = await startSshRig(root, { mutateSsh: { max_sessions: maxSessions, command_timeout: '60s' } });
  try {
    const sids: string[] = [];
    await pool(
      Array.from({ length: n }, (_, i) => i),
      8,
      async () => {
        sids.push((await rig.host({ covens: ['bench'] })).sid);
      },
    );
    await pool(sids, 8, async (sid) => {
      const r = await rig.api('POST', `/v1/souls/${sid}/check`);
      if (!r.body.reachable) throw new Error(`${sid}: ${r.body.reason}`);
    });
    const url = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'fleet'),
      path.join(root, 'fleet.git'),
      'v1',
    );
    if ((await rig.api('POST', '/v1/services', { name: 'fleet', git: url, ref: 'v1' })).status !== 201)
      throw new Error('service not registered');
    const input = { root: path.join(root, 'out'), message: 'bench' };
    const timed = async (start: () => Promise<{ status: number; body: any }>) => {
      const c0 = cpu();
      const m0 = machineBusySeconds();
      const t0 = Date.now();
      const r = await start();
      if (r.status !== 202) throw new Error(`run not accepted: ${r.status} ${JSON.stringify(r.body)}`);
      const inc = await settled(rig.k, 'bench', 600_000);
      const ms = Date.now() - t0;
      const rep = (await rig.api('GET', `/v1/incarnations/bench/runs/${r.body.apply_id}`)).body;
      if (inc.status !== 'ready') throw new Error(`run ended ${inc.status}: ${JSON.stringify(rep.hosts?.slice(0, 3))}`);
      // The machine's busy seconds say whether the run waited for cores (hosts, sshd, soul, Temporal and
      // PostgreSQL all share them here) or for something else (slots, round trips).
      const busy = machineBusySeconds() - m0;
      return {
        post_to_ready_ms: ms,
        keeper_cpu_s: round(cpu() - c0),
        machine_busy_cpu_s: round(busy),
        machine_busy_share: round(busy / ((os.cpus().length * ms) / 1000)),
        changed: rep.summary?.changed ?? null,
      };
    };
    const change = await timed(() =>
      rig.api('POST', '/v1/incarnations', { name: 'bench', service: 'fleet', covens: ['bench'], input }),
    );
    const noop = await timed(() => rig.api('POST', '/v1/incarnations/bench/runs', { operation: 'create', input }));
    return {
      n,
      max_sessions: maxSessions,
      change_run: change,
      noop_run: noop,
      target_noop_ms: n === 50 ? 3000 : null,
      loadavg_1m_end: round(os.loadavg()[0]!),
    };
  } finally {
    await rig.stop();
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  // --max-sessions=K: the keeper's ssh.max_sessions (default 8, the shipped default).
  const sessions = Number(args.find((a) => a.startsWith('--max-sessions='))?.split('=')[1] ?? 8);
  const ns = args
    .filter((a) => !a.startsWith('--'))
    .map(Number)
    .filter((x) => x > 0);
  const sizes = ns.length ? ns : [10, 50];
  const out = path.join(repoRoot(), 'bench', 'results', 'ssh.json');
  const runs: Record<string, unknown>[] = [];
  for (const n of sizes) {
    const r = await runOnce(n, sessions);
    console.log(JSON.stringify(r));
    runs.push(r);
  }
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(
    out,
    JSON.stringify(
      { benchmark: 'ssh', machine: `${os.cpus().length} cpus, shared`, date: new Date().toISOString(), runs },
      null,
      2,
    ) + '\n',
  );
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
