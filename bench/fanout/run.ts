// Benchmark (not a test): one incarnation run fanned out to N souls.
//   node --max-old-space-size=8192 dist/bench/fanout/run.js [--real-modules] [--threads=K] [N ...]   (default: 100 1000)
// Per N: a fresh keeper (`bin/keeper run`, its own process, database and queue), N swarm souls in
// this process, dealt out over K worker threads (one per CPU by default, swarm-threads.ts; each soul
// its own TLS stream and PKI-signed certificate), a three-step service from a
// local git repository rendered by the real scenario engine. Two modes:
// - default ("answer"): the souls answer every step as already satisfied and the service writes
//   three files; measures POST /v1/incarnations -> `ready` (cold: first load of the service) and a
//   second run of the same operation (warm);
// - --real-modules (or FANOUT_REAL_MODULES=1): every soul applies its steps with the soul's own step
//   handler (bench/fanout/real-steps.ts: the state modules and a ledger per soul) and the service is
//   test/fixtures/services/fleet (package `git`, a 0600 file, a rendered 0644 file under
//   <input.root>/<sid>/); the modules' commands (dpkg-query) are spawned from one small helper
//   process per swarm thread (spawner.ts). Three runs: a change run into a fresh input.root (cold), the same input
//   again (no-op), a change run into another fresh input.root (warm); the files of every host are
//   checked after each change run and must be untouched by the no-op (else the bench fails).
// Each run reports the Temporal history events and actions (parent and child workflows), the
// keeper's CPU seconds (/proc/<pid>/stat), this process's CPU and that of the state modules'
// commands and their spawners, when the souls saw the first step and sent the last result, and the
// load average. Writes bench/results/fanout.json (a result per N and mode). Needs `make stack`.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { silentLogger } from '../../common/logger';
import { loadConfig } from '../../platform/config/load';
import { keeperInit } from '../../keeper/init';
import { openCore } from '../../platform/runtime';
import { cleanupKeeperFiles, prepareKeeperConfig } from '../../test/support/keeper';
import { repoRoot } from '../../test/support/repo';
import { connectStackTemporal } from '../../test/support/temporal-client';
import { gitRepoFrom } from '../../test/runs/keeper';
import { signSwarmCerts } from '../streams/swarm';
import { checkFleetFiles, checkUnchanged, fleetRepo } from './fleet';
import { temporalCost } from '../temporal-cost';
import { SwarmThreads } from './swarm-threads';
import { cpuTimes } from '../fleet/proc';

type Mode = 'answer' | 'real-modules';

function round(x: number): number {
  return Math.round(x * 100) / 100;
}

/** The default mode's three-step service in a new local git repository (tag v1); returns its file:// URL. */
function serviceRepo(dir: string): string {
  const src = `${dir}.src`;
  fs.mkdirSync(path.join(src, 'scenario', 'create'), { recursive: true });
  fs.writeFileSync(path.join(src, 'service.yml'), 'name: fanout\nstate_schema_version: 1\n');
  const task = (name: string) => `  - name: ${name}
    module: core.file.present
    params:
      path: "/var/lib/fanout-bench/\${soulprint.self.fqdn}/${name}"
      content: "${name} \${input.tag}\\n"
      mode: "0644"
`;
  fs.writeFileSync(
    path.join(src, 'scenario', 'create', 'main.yml'),
    `description: Three files per host.\ninput:\n  tag:\n    type: string\n    default: one\ntasks:\n${task('a')}${task('b')}${task('c')}`,
  );
  return gitRepoFrom(src, dir, 'v1');
}

/** Each host's step statuses a real-modules run must end with (package already there, then two files). */
const EXPECTED_STATUSES = { change: ['ok', 'changed', 'changed'], 'no-op': ['ok', 'ok', 'ok'] } as const;

async function runOnce(n: number, client: Client, mode: Mode, threads: number): Promise<Record<string, unknown>> {
  const real = mode === 'real-modules';
  const loadStart = round(os.loadavg()[0]!);
  // hub.accept_rate off (as high as it goes): the swarm's connect fails on a busy refusal, and
  // the handshake rate measured here is the keeper's capacity, not its configured bound.
  const files = await prepareKeeperConfig({
    mutate: (doc) => {
      doc.logging = { level: 'error' };
      doc.reaper = { interval: '1s', lease_ttl: '15s' };
      doc.hub = { accept_rate: { per_second: 1000000, burst: 1000000 } };
    },
  });
  const config = loadConfig(files.configFile);
  const core = await openCore(config, silentLogger);
  const credential = path.join(files.dir, 'admin.jwt');
  await keeperInit({
    db: core.db,
    signingKey: core.signingKey,
    issuer: config.auth.jwt.issuer,
    ttlMs: 3_600_000,
    aid: 'bench',
    credentialOut: credential,
  });
  const sids = Array.from({ length: n }, (_, i) => `fanout-${String(i).padStart(5, '0')}.keeper.test`);
  // Registered straight in the registry, as bench/streams does: onboarding is not what is measured.
  // Marked onboarded (their certificates are signed by the PKI below): a run targets only onboarded
  // souls and refuses to start when its covens hold none.
  const onboardedAt = new Date();
  for (let i = 0; i < n; i += 1000) {
    await core
      .db('souls')
      .insert(
        sids
          .slice(i, i + 1000)
          .map((sid) => ({ sid, transport: 'agent', covens: ['bench'], status: 'pending', onboarded_at: onboardedAt })),
      );
  }
  await core.close();
  const token = fs.readFileSync(credential, 'utf8').trim();
  const base = `http://${config.listen.openapi.addr}`;
  const api = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(base + p, {
      method,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };

  const keeper = spawn(
    process.execPath,
    ['--max-old-space-size=4096', path.join(repoRoot(), 'bin', 'keeper'), 'run', `--config=${files.configFile}`],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  let swarm: SwarmThreads | undefined;
  // Everything the bench writes besides the keeper's files: the service repository and, with real
  // modules, the souls' ledgers (souls/<sid>/ledger) and the hosts' input roots (hosts-<k>/<sid>/).
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'fanout-'));
  try {
    await waitFor(`${base}/readyz ok`, async () => (await fetch(`${base}/readyz`)).ok, 60_000);
    const { keyPem, certs } = await signSwarmCerts(sids);
    const ca = fs.readFileSync(config.listen.grpc.event_stream.tls.ca);
    const target = `localhost:${config.listen.grpc.event_stream.addr.split(':')[1]}`;
    swarm = SwarmThreads.start({ target, ca, keyPem, real, soulsRoot: path.join(root, 'souls') }, certs, threads);
    await swarm.connect();
    await waitFor(
      `${n} souls connected`,
      async () =>
        (await api('GET', `/v1/souls?status=connected&limit=1&coven=bench`)).status === 200 &&
        (await connectedCount(api, n)) >= n,
      120_000,
    );

    const service = real ? 'fleet' : 'fanout';
    const url = real ? fleetRepo(path.join(root, 'fleet')) : serviceRepo(path.join(root, 'fanout'));
    const reg = await api('POST', '/v1/services', { name: service, git: url, ref: 'v1' });
    if (reg.status !== 201) throw new Error(`POST /v1/services: ${reg.status} ${JSON.stringify(reg.body)}`);

    const measure = async (
      start: () => Promise<{ status: number; body: any }>,
      expect?: keyof typeof EXPECTED_STATUSES,
    ) => {
      await swarm!.reset();
      const loadavg = os.loadavg().map(round);
      const cpu0 = cpuTimes(keeper.pid!).self;
      const self0 = cpuTimes(process.pid).self;
      const spawn0 = (await swarm!.collect()).spawners;
      const commands0 = cpuTimes(process.pid).children + spawn0.commands;
      const t0 = Date.now();
      const r = await start();
      if (r.status !== 202) throw new Error(`run: ${r.status} ${JSON.stringify(r.body)}`);
      const inc = await waitFor(
        'the run to settle',
        async () => {
          const g = await api('GET', '/v1/incarnations/fanout-bench');
          return g.body.status !== 'applying' ? g.body : undefined;
        },
        600_000,
        50,
      );
      const seconds = (Date.now() - t0) / 1000;
      const cpu = cpuTimes(keeper.pid!).self - cpu0;
      const selfCpu = cpuTimes(process.pid).self - self0;
      const window = await swarm!.collect();
      const spawn1 = window.spawners;
      const commandsCpu = cpuTimes(process.pid).children + spawn1.commands - commands0;
      const rep = (await api('GET', `/v1/incarnations/fanout-bench/runs/${r.body.apply_id}`)).body;
      if (inc.status !== 'ready')
        throw new Error(`run ${r.body.apply_id} ended ${inc.status} after ${round(seconds)} s: ${runTrouble(rep)}`);
      const steps = rep.hosts.reduce((a: number, h: any) => a + h.steps.length, 0);
      if (rep.hosts.length !== n || steps !== 3 * n)
        throw new Error(`report has ${rep.hosts.length} hosts and ${steps} steps`);
      if (expect) {
        const want = EXPECTED_STATUSES[expect].join(',');
        const off = rep.hosts.filter((h: any) => h.steps.map((st: any) => st.status).join(',') !== want);
        if (off.length > 0)
          throw new Error(`${off.length} host(s) did not end ${want}, e.g. ${JSON.stringify(off[0])}`);
      }
      return {
        ...(expect ? { kind: expect } : {}),
        post_to_ready_seconds: round(seconds),
        keeper_cpu_seconds: round(cpu),
        steps,
        // This process (the swarm threads: the souls' streams, modules and ledgers), the commands the
        // modules ran, and the helpers that spawned them (no commands in the default mode).
        swarm_cpu_seconds: round(selfCpu),
        commands_cpu_seconds: round(commandsCpu),
        ...(real ? { spawners_cpu_seconds: round(spawn1.helpers - spawn0.helpers) } : {}),
        // POST -> the first step request any soul got, -> the last step result any soul sent.
        first_step_request_seconds: window.firstRequestAt !== null ? round((window.firstRequestAt - t0) / 1000) : null,
        last_step_result_seconds: window.lastResultAt !== null ? round((window.lastResultAt - t0) / 1000) : null,
        // How late the swarm threads' timers ran (the worst thread): a busy loop delays step
        // requests and results, which a process per host would not.
        swarm_event_loop_delay_ms: { p99: window.lagP99, max: window.lagMax },
        swarm_threads: swarm!.size,
        loadavg_start: loadavg,
        ...(real ? { soul_steps: window.tally.summary() } : {}),
        temporal: await temporalCost(client, r.body.apply_id),
      };
    };
    if (!real) {
      const cold = await measure(() =>
        api('POST', '/v1/incarnations', { name: 'fanout-bench', service, covens: ['bench'] }),
      );
      const warm = await measure(() =>
        api('POST', '/v1/incarnations/fanout-bench/runs', { operation: 'create', input: { tag: 'two' } }),
      );
      const stepsAnswered = (await swarm.collect()).steps;
      return {
        mode,
        n,
        first_run: cold,
        second_run: warm,
        steps_answered_by_swarm: stepsAnswered,
        loadavg_1m_start: loadStart,
        loadavg_1m_end: round(os.loadavg()[0]!),
      };
    }
    // A fresh input.root per change run, so a change run writes every file; the no-op run repeats
    // the first run's input, so every module finds its state already there.
    const [rootA, rootB] = [path.join(root, 'hosts-1'), path.join(root, 'hosts-2')];
    const change = await measure(
      () =>
        api('POST', '/v1/incarnations', { name: 'fanout-bench', service, covens: ['bench'], input: { root: rootA } }),
      'change',
    );
    const written = checkFleetFiles(rootA, sids);
    const noop = await measure(
      () => api('POST', '/v1/incarnations/fanout-bench/runs', { operation: 'create', input: { root: rootA } }),
      'no-op',
    );
    checkUnchanged(written);
    const warmChange = await measure(
      () => api('POST', '/v1/incarnations/fanout-bench/runs', { operation: 'create', input: { root: rootB } }),
      'change',
    );
    checkFleetFiles(rootB, sids);
    const stepsAnswered = (await swarm.collect()).steps;
    return {
      mode,
      n,
      first_run: change,
      second_run: noop,
      third_run: warmChange,
      // Every host's two files, after each change run: content and mode; untouched by the no-op run.
      files_checked: { hosts: n, files_per_change_run: 2 * n, no_op_left_them_untouched: true },
      command_spawners: swarm.size,
      steps_answered_by_swarm: stepsAnswered,
      loadavg_1m_start: loadStart,
      loadavg_1m_end: round(os.loadavg()[0]!),
    };
  } finally {
    await swarm?.close();
    keeper.kill('SIGTERM');
    await new Promise((r) => keeper.once('exit', r));
    await cleanupKeeperFiles(files);
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** Why a run did not end ready, briefly: its error, hosts by status, and the first host not done. */
function runTrouble(rep: any): string {
  const hosts: any[] = rep?.hosts ?? [];
  const byStatus: Record<string, number> = {};
  for (const h of hosts) byStatus[h.status] = (byStatus[h.status] ?? 0) + 1;
  const bad = hosts.find((h) => h.status === 'failed' || h.status === 'unknown');
  return `${JSON.stringify(rep?.error ?? null)}; hosts ${JSON.stringify(byStatus)}; e.g. ${JSON.stringify(bad ?? null)}`;
}

/** Connected souls of the bench coven, counted through the API's pages. */
async function connectedCount(
  api: (m: string, p: string) => Promise<{ status: number; body: any }>,
  max: number,
): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  do {
    const r = await api(
      'GET',
      `/v1/souls?status=connected&coven=bench&limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    count += r.body.items.length;
    cursor = r.body.next_cursor ?? undefined;
  } while (cursor && count < max);
  return count;
}

async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  timeoutMs: number,
  everyMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const mode: Mode =
    args.includes('--real-modules') || process.env.FANOUT_REAL_MODULES === '1' ? 'real-modules' : 'answer';
  const ns = args.map(Number).filter((x) => x > 0);
  // Swarm threads: one per CPU unless --threads=K (1: every soul in one event loop, as before).
  const threadsArg = args.find((a) => a.startsWith('--threads='));
  const threads = threadsArg ? Number(threadsArg.slice('--threads='.length)) : os.cpus().length;
  if (!Number.isInteger(threads) || threads < 1)
    throw new Error(`--threads must be a whole number from 1, got ${threadsArg}`);
  const sizes = ns.length ? ns : [100, 1000];
  const out = path.join(repoRoot(), 'bench', 'results', 'fanout.json');
  const previous = fs.existsSync(out)
    ? ((JSON.parse(fs.readFileSync(out, 'utf8')) as { runs?: Record<string, unknown>[] }).runs ?? [])
    : [];
  // Results written before there were modes are the default mode's.
  const modeOf = (r: Record<string, unknown>) => (r.mode as Mode | undefined) ?? 'answer';
  const runs = previous.filter((r) => modeOf(r) !== mode || !sizes.includes(r.n as number));
  const connection = await connectStackTemporal();
  try {
    const client = new Client({ connection, namespace: 'default' });
    for (const n of sizes) {
      const r = await runOnce(n, client, mode, threads);
      console.log(JSON.stringify(r));
      runs.push(r);
    }
  } finally {
    await connection.close();
  }
  runs.sort((a, b) => (a.n as number) - (b.n as number) || modeOf(a).localeCompare(modeOf(b)));
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(
    out,
    JSON.stringify(
      { benchmark: 'fanout', machine: `${os.cpus().length} cpus, shared`, date: new Date().toISOString(), runs },
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
