// Benchmark (not a test): N soul streams from one process against one keeper process.
//   node --max-old-space-size=8192 dist/bench/streams/run.js [N ...]   (default: 1000 5000)
// Reports keeper RSS per stream, handshakes/s, and registry status lag p50/p99 (connect and
// disconnect, on a sample of streams) into bench/results/streams.json. Needs `make stack`.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { silentLogger } from '../../common/logger';
import { loadConfig } from '../../platform/config/load';
import { keeperInit } from '../../keeper/init';
import { openCore } from '../../platform/runtime';
import { cleanupKeeperFiles, prepareKeeperConfig } from '../../test/support/keeper';
import { repoRoot } from '../../test/support/repo';
import { SwarmSoul, signSwarmCerts } from './swarm';
import { pool } from '../pool';

const SAMPLE = 200;

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

function pct(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

/**
 * Polls the registry (every 25 ms, while the caller is still opening or closing streams) until each
 * SID shows `status`; returns each SID's delay from its entry in `since` (the moment its Hello was
 * sent or its stream closed), i.e. what an operator polling GET /v1/souls would see.
 */
async function statusLag(
  db: knexFactory.Knex,
  sids: string[],
  status: string,
  since: Map<string, number>,
  timeoutMs = 600_000,
): Promise<number[]> {
  const lags: number[] = [];
  const waiting = new Set(sids);
  const deadline = Date.now() + timeoutMs;
  while (waiting.size > 0 && Date.now() < deadline) {
    const ask = [...waiting].filter((s) => since.has(s));
    const rows =
      ask.length === 0
        ? []
        : ((await db('souls').select('sid').whereIn('sid', ask).where({ status })) as { sid: string }[]);
    const now = performance.now();
    for (const r of rows) {
      waiting.delete(r.sid);
      lags.push(now - since.get(r.sid)!);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  if (waiting.size > 0) throw new Error(`${waiting.size} souls never became ${status}`);
  return lags;
}

/** The keeper's own view of its memory (prom-client default metrics): V8 heap used/total, external, RSS. */
async function keeperMemory(metricsAddr: string): Promise<Record<string, number>> {
  const text = await (await fetch(`http://${metricsAddr}/metrics`)).text();
  const mb = (name: string) => {
    const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)$`, 'm').exec(text);
    return m ? round(Number(m[1]) / (1024 * 1024)) : NaN;
  };
  return {
    heap_used_mb: mb('nodejs_heap_size_used_bytes'),
    heap_total_mb: mb('nodejs_heap_size_total_bytes'),
    external_mb: mb('nodejs_external_memory_bytes'),
    rss_mb: mb('process_resident_memory_bytes'),
  };
}

async function runOnce(n: number): Promise<Record<string, unknown>> {
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
  await keeperInit({
    db: core.db,
    signingKey: core.signingKey,
    issuer: 'bench',
    ttlMs: 3_600_000,
    aid: 'bench',
    credentialOut: path.join(files.dir, 'admin.jwt'),
  });
  const sids = Array.from({ length: n }, (_, i) => `swarm-${i}.keeper.test`);
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
  await core.close();
  const db = knexFactory({ client: 'pg', connection: files.db.dsn, pool: { min: 0, max: 2 } });

  const keeper = spawn(
    process.execPath,
    ['--max-old-space-size=4096', path.join(repoRoot(), 'bin', 'keeper'), 'run', `--config=${files.configFile}`],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const souls: SwarmSoul[] = [];
  try {
    await waitReady(`http://${config.listen.openapi.addr}/readyz`);
    const rssIdle = rssMb(keeper.pid!);
    const memIdle = await keeperMemory(config.listen.metrics.addr);
    const t0 = performance.now();
    const { keyPem, certs } = await signSwarmCerts(sids);
    const signSeconds = (performance.now() - t0) / 1000;
    const ca = fs.readFileSync(config.listen.grpc.event_stream.tls.ca);
    const target = `localhost:${config.listen.grpc.event_stream.addr.split(':')[1]}`;
    for (const c of certs) souls.push(new SwarmSoul(c.sid, target, SwarmSoul.credentials(ca, keyPem, c.certPem)));

    const opened = new Map<string, number>();
    const handshakeMs: number[] = [];
    const t1 = performance.now();
    const connectLagP = statusLag(db, sids, 'connected', opened);
    await pool(souls, 100, async (s) => {
      opened.set(s.sid, performance.now());
      handshakeMs.push(await s.connect());
    });
    const rampSeconds = (performance.now() - t1) / 1000;
    const connectLag = await connectLagP;
    await new Promise((r) => setTimeout(r, 5000)); // a few heartbeat rounds at full size
    const rssFull = rssMb(keeper.pid!);
    const memFull = await keeperMemory(config.listen.metrics.addr);

    // Disconnect and reconnect a sample, timing the registry.
    const sample = souls.filter((_, i) => i % Math.max(1, Math.floor(n / SAMPLE)) === 0).slice(0, SAMPLE);
    const closed = new Map<string, number>();
    for (const s of sample) {
      closed.set(s.sid, performance.now());
      s.close();
    }
    const disconnectLag = await statusLag(
      db,
      sample.map((s) => s.sid),
      'disconnected',
      closed,
    );
    const reopened = new Map<string, number>();
    const reconnectLagP = statusLag(
      db,
      sample.map((s) => s.sid),
      'connected',
      reopened,
    );
    await pool(sample, 10, async (s) => {
      reopened.set(s.sid, performance.now());
      await s.connect();
    });
    const reconnectLag = await reconnectLagP;

    return {
      n,
      keeper_rss_idle_mb: round(rssIdle),
      keeper_rss_mb: round(rssFull),
      keeper_rss_per_stream_kb: round(((rssFull - rssIdle) * 1024) / n),
      keeper_memory_idle: memIdle,
      keeper_memory_full: memFull,
      loadavg_1m_start: loadStart,
      loadavg_1m_end: round(os.loadavg()[0]!),
      cert_signing_seconds: round(signSeconds),
      ramp_seconds: round(rampSeconds),
      handshakes_per_second: round(n / rampSeconds),
      handshake_ms_p50: round(pct(handshakeMs, 50)),
      handshake_ms_p99: round(pct(handshakeMs, 99)),
      status_lag_connect_ms_p50: round(pct(connectLag, 50)),
      status_lag_connect_ms_p99: round(pct(connectLag, 99)),
      status_lag_disconnect_ms_p50: round(pct(disconnectLag, 50)),
      status_lag_disconnect_ms_p99: round(pct(disconnectLag, 99)),
      status_lag_reconnect_ms_p50: round(pct(reconnectLag, 50)),
      status_lag_reconnect_ms_p99: round(pct(reconnectLag, 99)),
      sample: sample.length,
    };
  } finally {
    for (const s of souls) s.close();
    keeper.kill('SIGTERM');
    await new Promise((r) => keeper.once('exit', r));
    await db.destroy();
    await cleanupKeeperFiles(files);
  }
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}

async function waitReady(url: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`keeper not ready at ${url}`);
}

async function main(): Promise<void> {
  const ns = process.argv
    .slice(2)
    .map(Number)
    .filter((x) => x > 0);
  const out = path.join(repoRoot(), 'bench', 'results', 'streams.json');
  const previous = fs.existsSync(out)
    ? ((JSON.parse(fs.readFileSync(out, 'utf8')) as { runs?: Record<string, unknown>[] }).runs ?? [])
    : [];
  const runs = previous.filter((r) => !(ns.length ? ns : [1000, 5000]).includes(r.n as number));
  for (const n of ns.length ? ns : [1000, 5000]) {
    const r = await runOnce(n);
    console.log(JSON.stringify(r));
    runs.push(r);
  }
  runs.sort((a, b) => (a.n as number) - (b.n as number));
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(
    out,
    JSON.stringify(
      { benchmark: 'streams', machine: `${os.cpus().length} cpus, shared`, date: new Date().toISOString(), runs },
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
