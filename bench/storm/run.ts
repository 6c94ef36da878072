// Benchmark (not a test): the reconnect storm. N swarm souls (bench/storm/soul.ts, reconnecting as
// `soul run` does) connected to one keeper process; the keeper is stopped (SIGTERM: goodbye
// shutdown to every soul) and started again with the same config. Measured: time until every soul
// has a new Welcome (from the stop, and from the new keeper's /readyz), the new keeper's peak RSS and
// CPU (sampled from /proc every 250 ms), and how many streams it refused over hub.accept_rate.
//   node --max-old-space-size=8192 dist/bench/storm/run.js [N ...]   (default: 1000; 10,000 needs more than
//   a shared 2-core machine with a one-process swarm, docs/reliability.md)
//   STORM_ACCEPT_RATE=<per_second>/<burst> sets hub.accept_rate (default: the shipped one).
//   STORM_LEASE_TTL=<duration> sets reaper.lease_ttl (default: the shipped 3.5 s, a heartbeat every
//   1.17 s): at 10,000 souls on two cores the one-process swarm cannot send 8,500 heartbeats a second
//   while it handshakes, its souls are closed as silent and reconnect without end; 15s (a heartbeat
//   every 5 s) measures the reconnect storm, not this machine's presence budget (bench/presence).
// Writes bench/results/storm.json. Needs `make stack`. Keeper config: the shipped defaults (reaper,
// hub.accept_rate), logging at error.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { silentLogger } from '../../common/logger';
import { keeperInit } from '../../keeper/init';
import { loadConfig } from '../../platform/config/load';
import { openCore } from '../../platform/runtime';
import { cleanupKeeperFiles, prepareKeeperConfig } from '../../test/support/keeper';
import { repoRoot } from '../../test/support/repo';
import { signSwarmCerts } from '../streams/swarm';
import { StormSoul } from './soul';

const DEADLINE_MS = 600_000;
const TICK_HZ = 100; // USER_HZ of /proc/<pid>/stat on Linux

function procSample(pid: number): { rssMb: number; hwmMb: number; cpuTicks: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024, cpuTicks: Number(f[11]) + Number(f[12]) };
}

/** The keeper of the run in progress: killed if the bench itself is stopped (timeout, Ctrl-C). */
let live: ChildProcess | undefined;
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.once(sig, () => {
    live?.kill('SIGKILL');
    process.exit(130);
  });

function spawnKeeper(configFile: string): ChildProcess {
  return (live = spawn(
    process.execPath,
    ['--max-old-space-size=4096', path.join(repoRoot(), 'bin', 'keeper'), 'run', `--config=${configFile}`],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  ));
}

async function waitReady(url: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`keeper not ready at ${url}`);
}

async function busyRefusals(metricsAddr: string): Promise<number> {
  const text = await (await fetch(`http://${metricsAddr}/metrics`)).text();
  const line = text
    .split('\n')
    .find(
      (l) =>
        l.startsWith('keeper_handshakes_total{') &&
        l.includes('listener="event_stream"') &&
        l.includes('outcome="busy"'),
    );
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

async function until(what: string, ok: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!ok()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function leaseTtlFromEnv(): string | undefined {
  return /^\d+(\.\d+)?(ms|s|m)$/.test(process.env.STORM_LEASE_TTL ?? '') ? process.env.STORM_LEASE_TTL : undefined;
}

function acceptRateFromEnv(): { per_second: number; burst: number } | undefined {
  const m = /^(\d+(?:\.\d+)?)\/(\d+)$/.exec(process.env.STORM_ACCEPT_RATE ?? '');
  return m ? { per_second: Number(m[1]), burst: Number(m[2]) } : undefined;
}

async function runOnce(n: number): Promise<Record<string, unknown>> {
  const loadStart = round(os.loadavg()[0]!);
  const rate = acceptRateFromEnv();
  const leaseTtl = leaseTtlFromEnv();
  const files = await prepareKeeperConfig({
    mutate: (doc) => {
      doc.logging = { level: 'error' };
      delete doc.reaper;
      if (leaseTtl) doc.reaper = { lease_ttl: leaseTtl };
      if (rate) doc.hub = { accept_rate: rate };
    },
  });
  const config = loadConfig(files.configFile);
  const core = await openCore(config, silentLogger);
  await keeperInit({
    db: core.db,
    signingKey: core.signingKey,
    issuer: 'bench',
    ttlMs: 3_600_000,
    aid: 'bench',
    credentialOut: path.join(files.dir, 'admin.jwt'),
  });
  const sids = Array.from({ length: n }, (_, i) => `storm-${i}.keeper.test`);
  // Marked onboarded (their certificates are signed by the PKI below): the event stream admits
  // only souls that were onboarded.
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
  const readyz = `http://${config.listen.openapi.addr}/readyz`;
  let keeper = spawnKeeper(files.configFile);
  const souls: StormSoul[] = [];
  try {
    await waitReady(readyz);
    const { keyPem, certs } = await signSwarmCerts(sids);
    const ca = fs.readFileSync(config.listen.grpc.event_stream.tls.ca);
    const target = `localhost:${config.listen.grpc.event_stream.addr.split(':')[1]}`;
    for (const c of certs) souls.push(new StormSoul(c.sid, target, { ca, keyPem, certPem: c.certPem }));

    // Every soul at once: the first connection is a storm too (the keeper spreads it by its rate).
    const t1 = performance.now();
    await Promise.all(souls.map((s) => s.start()));
    const initialSeconds = (performance.now() - t1) / 1000;
    const initialBusy = souls.reduce((a, s) => a + s.busy, 0);
    await new Promise((r) => setTimeout(r, 5000)); // a few heartbeat rounds at full size
    const rssBefore = procSample(keeper.pid!).rssMb;
    for (const s of souls) {
      s.busy = 0;
      s.failed = 0;
    }
    const welcomes = souls.map((s) => s.welcomes);

    const tStop = performance.now();
    const exited = new Promise((r) => keeper.once('exit', r));
    keeper.kill('SIGTERM');
    await exited;
    const stopSeconds = (performance.now() - tStop) / 1000;
    keeper = spawnKeeper(files.configFile);
    const pid = keeper.pid!;
    const samples: { at: number; rssMb: number; hwmMb: number; cpuTicks: number }[] = [];
    const sampler = setInterval(() => {
      try {
        samples.push({ at: performance.now(), ...procSample(pid) });
      } catch {
        /* exited */
      }
    }, 250);
    await waitReady(readyz);
    const tReady = performance.now();
    await until('every soul welcomed again', () => souls.every((s, i) => s.welcomes > welcomes[i]!), DEADLINE_MS);
    const tBack = performance.now();
    const lastBack = Math.max(...souls.map((s) => s.lastWelcomeAt));
    await new Promise((r) => setTimeout(r, 2000));
    clearInterval(sampler);
    const refusedByKeeper = await busyRefusals(config.listen.metrics.addr);
    const connected = Number(
      ((await core.db('souls').where({ status: 'connected' }).count({ c: '*' })) as { c: string }[])[0]!.c,
    );

    // CPU: over the whole storm (ready -> all back), and the busiest one-second window.
    const inStorm = samples.filter((s) => s.at >= tStop && s.at <= tBack + 250);
    const cores = (a: (typeof samples)[number], b: (typeof samples)[number]) =>
      (b.cpuTicks - a.cpuTicks) / TICK_HZ / ((b.at - a.at) / 1000);
    let peak1s = 0;
    for (let i = 0, j = 0; j < inStorm.length; j++) {
      while (inStorm[j]!.at - inStorm[i]!.at > 1000) i++;
      if (inStorm[j]!.at - inStorm[i]!.at >= 750) peak1s = Math.max(peak1s, cores(inStorm[i]!, inStorm[j]!));
    }
    const fromReady = samples.filter((s) => s.at >= tReady);
    const busyPerSoul = souls.map((s) => s.busy);
    const backAfterReady = souls.map((s) => Math.max(0, s.lastWelcomeAt - tReady) / 1000).sort((a, b) => a - b);
    const pct = (p: number) => round(backAfterReady[Math.min(n - 1, Math.floor((p / 100) * n))]!);
    return {
      n,
      accept_rate: config.hub.accept_rate,
      loadavg_1m_start: loadStart,
      loadavg_1m_end: round(os.loadavg()[0]!),
      initial_connect_seconds: round(initialSeconds),
      initial_busy_answers: initialBusy,
      keeper_rss_before_restart_mb: round(rssBefore),
      keeper_stop_seconds: round(stopSeconds),
      keeper_start_seconds: round((tReady - tStop) / 1000 - stopSeconds),
      all_back_after_stop_seconds: round((lastBack - tStop) / 1000),
      all_back_after_ready_seconds: round((Math.max(lastBack, tReady) - tReady) / 1000),
      back_after_ready_seconds_p50: pct(50),
      back_after_ready_seconds_p90: pct(90),
      registry_connected: connected,
      keeper_peak_rss_mb: round(Math.max(...samples.map((s) => s.hwmMb))),
      keeper_cpu_cores_avg: fromReady.length > 1 ? round(cores(fromReady[0]!, fromReady[fromReady.length - 1]!)) : NaN,
      keeper_cpu_cores_peak_1s: round(peak1s),
      busy_answers: busyPerSoul.reduce((a, b) => a + b, 0),
      busy_answers_max_per_soul: Math.max(...busyPerSoul),
      souls_told_to_retry: busyPerSoul.filter((b) => b > 0).length,
      keeper_busy_refusals_metric: refusedByKeeper,
      other_failed_attempts: souls.reduce((a, s) => a + s.failed, 0),
    };
  } finally {
    for (const s of souls) s.stop();
    if (keeper.exitCode === null && keeper.signalCode === null) {
      const exited = new Promise((r) => keeper.once('exit', r));
      keeper.kill('SIGTERM');
      await exited;
    }
    await core.close();
    await cleanupKeeperFiles(files);
  }
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}

async function main(): Promise<void> {
  const ns = process.argv
    .slice(2)
    .map(Number)
    .filter((x) => x > 0);
  const out = path.join(repoRoot(), 'bench', 'results', 'storm.json');
  const previous = fs.existsSync(out)
    ? ((JSON.parse(fs.readFileSync(out, 'utf8')) as { runs?: Record<string, unknown>[] }).runs ?? [])
    : [];
  const list = ns.length ? ns : [1000];
  const rate = JSON.stringify(acceptRateFromEnv() ?? null);
  // One result per N and accept rate (null: the shipped default); a new run replaces its own.
  const runs = previous.filter(
    (r) => !(list.includes(r.n as number) && JSON.stringify(r.accept_rate_set ?? null) === rate),
  );
  for (const n of list) {
    const r = await runOnce(n);
    console.log(JSON.stringify(r));
    runs.push({
      ...r,
      accept_rate_set: acceptRateFromEnv() ?? null,
      lease_ttl_set: leaseTtlFromEnv() ?? null,
      date: new Date().toISOString(),
    });
    runs.sort((a, b) => (a.n as number) - (b.n as number));
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(
      out,
      JSON.stringify(
        { benchmark: 'storm', machine: `${os.cpus().length} cpus (${os.cpus()[0]?.model ?? '?'}), shared`, runs },
        null,
        2,
      ) + '\n',
    );
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
