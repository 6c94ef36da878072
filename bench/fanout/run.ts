// Benchmark (not a test): one incarnation run fanned out to N souls.
//   node --max-old-space-size=8192 dist/bench/fanout/run.js [N ...]   (default: 100 1000)
// Per N: a fresh keeper (`bin/keeper run`, its own process, database and queue), N swarm souls in
// this process (each its own TLS stream and PKI-signed certificate, answering every step as already
// satisfied), a three-step service from a local git repository rendered by the real scenario
// engine. Measures POST /v1/incarnations -> `ready` (cold: first load of the service) and a second
// run of the same operation (warm), the Temporal history events and actions of each run (parent
// and child workflows), and the keeper's CPU seconds (/proc/<pid>/stat). Writes
// bench/results/fanout.json. Needs `make stack`.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { silentLogger } from '../../common/logger';
import { loadConfig } from '../../platform/config/load';
import { keeperInit } from '../../keeper/init';
import { openCore } from '../../platform/runtime';
import { cleanupKeeperFiles, prepareKeeperConfig } from '../../test/support/keeper';
import { repoRoot } from '../../test/support/repo';
import { connectStackTemporal } from '../../test/support/temporal-client';
import { SwarmSoul, signSwarmCerts } from '../streams/swarm';

const EventType = temporal.api.enums.v1.EventType;
const CLK_TCK = 100; // Linux USER_HZ: /proc/<pid>/stat times are in 1/100 s

function cpuSeconds(pid: number): number {
  // Fields after the parenthesised command name: utime and stime are the 12th and 13th.
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

function round(x: number): number { return Math.round(x * 100) / 100; }

async function pool<T>(items: T[], concurrency: number, fn: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => { while (next < items.length) await fn(items[next++]!); }));
}

/** A three-step service in a new local git repository; returns its file:// URL. */
function serviceRepo(dir: string): string {
  fs.mkdirSync(path.join(dir, 'scenario', 'create'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'service.yml'), 'name: fanout\nstate_schema_version: 1\n');
  const task = (name: string) => `  - name: ${name}
    module: core.file.present
    params:
      path: "/var/lib/fanout-bench/\${soulprint.self.fqdn}/${name}"
      content: "${name} \${input.tag}\\n"
      mode: "0644"
`;
  fs.writeFileSync(path.join(dir, 'scenario', 'create', 'main.yml'),
    `description: Three files per host.\ninput:\n  tag:\n    type: string\n    default: one\ntasks:\n${task('a')}${task('b')}${task('c')}`);
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@keeper.test', ...args], { cwd: dir, stdio: 'pipe' });
  git('init', '-q'); git('add', '-A'); git('commit', '-q', '-m', 'fanout'); git('tag', 'v1');
  return `file://${dir}`;
}

/**
 * History events of a run's workflow and its child workflows (a batch of more than 500 hosts is
 * split into children), and Temporal "actions" as billed: workflows started, activities scheduled,
 * timers started, child workflows initiated, signals and markers (activity retries not counted).
 */
async function temporalCost(client: Client, workflowId: string): Promise<{ workflows: number; history_events: number; activities: number; actions: number }> {
  const out = { workflows: 0, history_events: 0, activities: 0, actions: 0 };
  const queue = [workflowId];
  while (queue.length > 0) {
    const id = queue.shift()!;
    const history = await client.workflow.getHandle(id).fetchHistory();
    out.workflows++;
    out.actions++; // the workflow's start
    for (const e of history.events ?? []) {
      out.history_events++;
      switch (e.eventType) {
        case EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: out.activities++; out.actions++; break;
        case EventType.EVENT_TYPE_TIMER_STARTED:
        case EventType.EVENT_TYPE_MARKER_RECORDED:
        case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
        case EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES: out.actions++; break;
        case EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
          queue.push(e.startChildWorkflowExecutionInitiatedEventAttributes!.workflowId!);
          break;
        default: break;
      }
    }
  }
  return out;
}

async function runOnce(n: number, client: Client): Promise<Record<string, unknown>> {
  const loadStart = round(os.loadavg()[0]!);
  // hub.accept_rate off (as high as it goes): the swarm's connect fails on a busy refusal, and
  // the handshake rate measured here is the keeper's capacity, not its configured bound.
  const files = await prepareKeeperConfig({ mutate: (doc) => {
    doc.logging = { level: 'error' }; doc.reaper = { interval: '1s', lease_ttl: '15s' };
    doc.hub = { accept_rate: { per_second: 1000000, burst: 1000000 } };
  } });
  const config = loadConfig(files.configFile);
  const core = await openCore(config, silentLogger);
  const credential = path.join(files.dir, 'admin.jwt');
  await keeperInit({ db: core.db, signingKey: core.signingKey, issuer: config.auth.jwt.issuer, ttlMs: 3_600_000, aid: 'bench', credentialOut: credential });
  const sids = Array.from({ length: n }, (_, i) => `fanout-${String(i).padStart(5, '0')}.keeper.test`);
  // Registered straight in the registry, as bench/streams does: onboarding is not what is measured.
  // Marked onboarded (their certificates are signed by the PKI below): a run targets only onboarded
  // souls and refuses to start when its covens hold none.
  const onboardedAt = new Date();
  for (let i = 0; i < n; i += 1000) {
    await core.db('souls').insert(sids.slice(i, i + 1000).map((sid) => ({ sid, transport: 'agent', covens: ['bench'], status: 'pending', onboarded_at: onboardedAt })));
  }
  await core.close();
  const token = fs.readFileSync(credential, 'utf8').trim();
  const base = `http://${config.listen.openapi.addr}`;
  const api = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(base + p, { method, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };

  const keeper = spawn(process.execPath, ['--max-old-space-size=4096', path.join(repoRoot(), 'bin', 'keeper'), 'run', `--config=${files.configFile}`],
    { stdio: ['ignore', 'ignore', 'inherit'] });
  const souls: SwarmSoul[] = [];
  try {
    await waitFor(`${base}/readyz ok`, async () => (await fetch(`${base}/readyz`)).ok, 60_000);
    const { keyPem, certs } = await signSwarmCerts(sids);
    const ca = fs.readFileSync(config.listen.grpc.event_stream.tls.ca);
    const target = `localhost:${config.listen.grpc.event_stream.addr.split(':')[1]}`;
    for (const c of certs) souls.push(new SwarmSoul(c.sid, target, SwarmSoul.credentials(ca, keyPem, c.certPem), { answerSteps: true }));
    await pool(souls, 100, async (s) => { await s.connect(); });
    await waitFor(`${n} souls connected`, async () => (await api('GET', `/v1/souls?status=connected&limit=1&coven=bench`)).status === 200
      && await connectedCount(api, n) >= n, 120_000);

    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'fanout-svc-'));
    const url = serviceRepo(path.join(root, 'fanout'));
    const reg = await api('POST', '/v1/services', { name: 'fanout', git: url, ref: 'v1' });
    if (reg.status !== 201) throw new Error(`POST /v1/services: ${reg.status} ${JSON.stringify(reg.body)}`);

    const measure = async (start: () => Promise<{ status: number; body: any }>) => {
      const cpu0 = cpuSeconds(keeper.pid!);
      const t0 = performance.now();
      const r = await start();
      if (r.status !== 202) throw new Error(`run: ${r.status} ${JSON.stringify(r.body)}`);
      const inc = await waitFor('the run to settle', async () => {
        const g = await api('GET', '/v1/incarnations/fanout-bench');
        return g.body.status !== 'applying' ? g.body : undefined;
      }, 600_000, 50);
      const seconds = (performance.now() - t0) / 1000;
      const cpu = cpuSeconds(keeper.pid!) - cpu0;
      if (inc.status !== 'ready') throw new Error(`run ${r.body.apply_id} ended ${inc.status}`);
      const rep = (await api('GET', `/v1/incarnations/fanout-bench/runs/${r.body.apply_id}`)).body;
      const steps = rep.hosts.reduce((a: number, h: any) => a + h.steps.length, 0);
      if (rep.hosts.length !== n || steps !== 3 * n) throw new Error(`report has ${rep.hosts.length} hosts and ${steps} steps`);
      return { post_to_ready_seconds: round(seconds), keeper_cpu_seconds: round(cpu), steps, temporal: await temporalCost(client, r.body.apply_id) };
    };
    const cold = await measure(() => api('POST', '/v1/incarnations', { name: 'fanout-bench', service: 'fanout', covens: ['bench'] }));
    const warm = await measure(() => api('POST', '/v1/incarnations/fanout-bench/runs', { operation: 'create', input: { tag: 'two' } }));
    const stepsAnswered = souls.reduce((a, s) => a + s.steps, 0);
    fs.rmSync(root, { recursive: true, force: true });
    return { n, first_run: cold, second_run: warm, steps_answered_by_swarm: stepsAnswered, loadavg_1m_start: loadStart, loadavg_1m_end: round(os.loadavg()[0]!) };
  } finally {
    for (const s of souls) s.close();
    keeper.kill('SIGTERM');
    await new Promise((r) => keeper.once('exit', r));
    await cleanupKeeperFiles(files);
  }
}

/** Connected souls of the bench coven, counted through the API's pages. */
async function connectedCount(api: (m: string, p: string) => Promise<{ status: number; body: any }>, max: number): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  do {
    const r = await api('GET', `/v1/souls?status=connected&coven=bench&limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    count += r.body.items.length;
    cursor = r.body.next_cursor ?? undefined;
  } while (cursor && count < max);
  return count;
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs: number, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try { const v = await fn(); if (v !== undefined && v !== false) return v; } catch { /* not yet */ }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

async function main(): Promise<void> {
  const ns = process.argv.slice(2).map(Number).filter((x) => x > 0);
  const sizes = ns.length ? ns : [100, 1000];
  const out = path.join(repoRoot(), 'bench', 'results', 'fanout.json');
  const previous = fs.existsSync(out) ? (JSON.parse(fs.readFileSync(out, 'utf8')) as { runs?: Record<string, unknown>[] }).runs ?? [] : [];
  const runs = previous.filter((r) => !sizes.includes(r.n as number));
  const connection = await connectStackTemporal();
  try {
    const client = new Client({ connection, namespace: 'default' });
    for (const n of sizes) {
      const r = await runOnce(n, client);
      console.log(JSON.stringify(r));
      runs.push(r);
    }
  } finally {
    await connection.close();
  }
  runs.sort((a, b) => (a.n as number) - (b.n as number));
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify({ benchmark: 'fanout', machine: `${os.cpus().length} cpus, shared`, date: new Date().toISOString(), runs }, null, 2) + '\n');
}

main().then(() => process.exit(0), (err) => { console.error(err); process.exit(1); });
