// A live fleet for a fault scenario: a keeper as its own process (`bin/keeper run`, so it can be
// killed for real) whose config may point at private dependencies, real souls in their own UTS
// namespaces, and a service whose steps are slow enough for a fault to land mid-run: each step writes
// a file (changed) and is confirmed by a re-send `delay` seconds later (unchanged, ending its `until`).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../platform/config/load';
import { cleanupKeeperFiles, initTestKeeper, prepareKeeperConfig, type InitializedKeeper } from '../support/keeper';
import {
  endpointOf,
  soulInit,
  soulRun,
  uniqueSid,
  waitForStatus,
  writeSoulConfig,
  type EndpointSpec,
  type KeeperAccess,
} from '../agents/harness';
import type { TestDatabase } from '../support/database';
import { api, gitRepoFrom, spawnKeeper, tempDir, waitFor, type KeeperProcess, type TestSoul } from '../runs/keeper';
import { checkHistory, ledgerLines, type HistoryReport } from './history';

export function writeSlowService(dir: string, steps: number, delaySec: number): void {
  fs.mkdirSync(path.join(dir, 'scenario', 'create'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'service.yml'), 'name: slowfiles\nstate_schema_version: 1\n');
  const tasks = Array.from(
    { length: steps },
    (_, i) => `  - name: file ${i}
    module: core.file.present
    params:
      path: "\${input.root}/\${soulprint.self.fqdn}/f${i}"
      content: "f${i} on \${soulprint.self.fqdn}\\n"
      mode: "0644"
    until: "result.changed == false"
    retries: 3
    delay: ${delaySec}
`,
  ).join('');
  fs.writeFileSync(
    path.join(dir, 'scenario', 'create', 'main.yml'),
    `description: ${steps} slow files on every host.
input:
  root:
    type: string
state_changes:
  sets:
    root: "\${input.root}"
tasks:
${tasks}`,
  );
}

export interface RigOptions {
  db?: TestDatabase;
  /** A secret the caller already wrote (in a private store): the keeper's DSN, password, signing key. */
  secretName?: string;
  mutate?: (doc: Record<string, any>) => void;
  covens?: string[][];
  steps?: number;
  delaySec?: number;
  /** A second keeper (its own kid and ports, same database, secret and queue) the souls fail over to. */
  second?: boolean;
  /** The CA the souls pin for the keepers' gRPC listeners (default: the stack's; test/prod has its own store). */
  soulCa?: string;
}

export interface SecondKeeper {
  access: KeeperAccess & { configFile: string };
  keeper: KeeperProcess;
  dir: string;
}

export interface Rig {
  root: string;
  out: string;
  k: InitializedKeeper;
  keeper: KeeperProcess;
  souls: TestSoul[];
  b?: SecondKeeper;
  /** Creates incarnation `name` on every soul (files under <out>/<name>); returns the run's apply_id. */
  create(name: string): Promise<string>;
  report(name: string, applyId: string): Promise<any>;
  restartKeeper(): Promise<void>;
  check(): Promise<HistoryReport>;
  stop(): Promise<void>;
}

export async function startRig(opts: RigOptions = {}): Promise<Rig> {
  const root = tempDir('faults-');
  const out = path.join(root, 'out');
  const src = path.join(root, 'slowfiles-src');
  writeSlowService(src, opts.steps ?? 4, opts.delaySec ?? 1);
  const url = gitRepoFrom(src, path.join(root, 'slowfiles.git'), 'v1');
  const k = await initTestKeeper({
    ...(opts.db ? { db: opts.db } : {}),
    ...(opts.secretName ? { secretName: opts.secretName } : {}),
    ...(opts.mutate ? { mutate: opts.mutate } : {}),
  });
  const rig: Rig = {
    root,
    out,
    k,
    keeper: await spawnKeeper(k),
    souls: [],
    async create(name) {
      const r = await api(k, 'POST', '/v1/incarnations', {
        name,
        service: 'slowfiles',
        covens: [...new Set((opts.covens ?? [['web']]).flat())],
        input: { root: path.join(out, name) },
      });
      assert.equal(r.status, 202, JSON.stringify(r.body));
      return r.body.apply_id as string;
    },
    async report(name, applyId) {
      return (await api(k, 'GET', `/v1/incarnations/${name}/runs/${applyId}`)).body;
    },
    async restartKeeper() {
      if (rig.keeper.child.exitCode === null && rig.keeper.child.signalCode === null) {
        rig.keeper.child.kill('SIGTERM');
        await rig.keeper.exited;
      }
      rig.keeper = await spawnKeeper(k);
    },
    check: () => checkHistory(k.db.dsn, rig.souls),
    async stop() {
      await Promise.all(rig.souls.map((s) => s.run.kill()));
      for (const p of [rig.keeper, rig.b?.keeper]) {
        if (p && p.child.exitCode === null && p.child.signalCode === null) {
          p.child.kill('SIGKILL');
          await p.exited;
        }
      }
      if (rig.b) fs.rmSync(rig.b.dir, { recursive: true, force: true });
      await cleanupKeeperFiles(k);
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
  try {
    if (opts.second) {
      const files = await prepareKeeperConfig({
        kid: `${k.config.kid}-b`,
        db: k.db,
        secretName: k.secretName,
        mutate: (doc) => {
          doc.temporal = { ...doc.temporal, ...k.doc.temporal };
          doc.reaper = k.doc.reaper;
          opts.mutate?.(doc);
        },
      });
      const config = loadConfig(files.configFile);
      const access = {
        baseUrl: `http://${config.listen.openapi.addr}`,
        adminToken: k.adminToken,
        config,
        configFile: files.configFile,
      };
      rig.b = { access, keeper: await spawnKeeper(access), dir: files.dir };
    }
    rig.souls = await startFleet(
      k,
      path.join(root, 'souls'),
      opts.covens ?? [['web'], ['web']],
      rig.b ? [endpointOf(k, 10), endpointOf(rig.b.access, 20)] : [endpointOf(k)],
      opts.soulCa,
    );
    const r = await api(k, 'POST', '/v1/services', { name: 'slowfiles', git: url, ref: 'v1' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  } catch (err) {
    (err as Error).message += `\n--- keeper log ---\n${rig.keeper.log.stderr.slice(-3000)}`;
    await rig.stop();
    throw err;
  }
  return rig;
}

/** Waits until some (not all) of the run's steps are in the souls' ledgers: the run is mid-dispatch. */
export async function midDispatch(rig: Rig, applyId: string, minSteps = 1): Promise<void> {
  await waitFor(
    'the run to be mid-dispatch',
    async () => {
      const n = rig.souls.reduce((a, s) => a + new Set(ledgerLines(s, applyId).map((l) => l.index)).size, 0);
      return n >= minSteps;
    },
    60_000,
    100,
  ).catch((err: Error) => {
    err.message += `\n--- keeper log ---\n${rig.keeper.log.stderr.slice(-3000)}`;
    throw err;
  });
}

/** Polls the incarnation (tolerating a keeper that is still coming back) until it leaves `applying`. */
export async function settledStatus(rig: Rig, name: string, timeoutMs = 120_000): Promise<any> {
  return waitFor(
    `${name} to settle`,
    async () => {
      const r = await api(rig.k, 'GET', `/v1/incarnations/${name}`);
      return r.status === 200 && r.body.status !== 'applying' ? r.body : undefined;
    },
    timeoutMs,
    250,
  ).catch((err: Error) => {
    err.message += `\n--- keeper log ---\n${rig.keeper.log.stderr.slice(-3000)}`;
    throw err;
  });
}

/**
 * The run ended: a `ready` incarnation is checked as it is; an `error_locked` one is checked, then
 * unlocked with retry by the operator and must end `ready`, checked again. Returns the first status.
 */
export async function settleAndCheck(rig: Rig, name: string): Promise<string> {
  const first = (await settledStatus(rig, name)).status as string;
  await rig.check();
  if (first === 'error_locked') {
    const r = await api(rig.k, 'POST', `/v1/incarnations/${name}/unlock`, { retry: true });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal((await settledStatus(rig, name)).status, 'ready', 'the retried run ends ready');
    await rig.check();
  }
  return first;
}

/** As test/runs' startSouls, with the souls' keeper endpoints given (failover by priority). */
async function startFleet(
  k: KeeperAccess,
  root: string,
  covens: string[][],
  endpoints: EndpointSpec[],
  ca?: string,
): Promise<TestSoul[]> {
  // Five at a time: twenty `soul init`s at once on a loaded machine (load 20 on two cores) missed the
  // keeper's 5 s TLS answer and 15 s enrolment deadlines, and bench/failover's trial was lost.
  let next = 0;
  const out: TestSoul[] = [];
  const one = async (c: string[], i: number): Promise<TestSoul> => {
    const sid = uniqueSid(`host${i + 1}`);
    const r = await api(k, 'POST', '/v1/souls', { sid, transport: 'agent', covens: c });
    if (r.status !== 201) throw new Error(`POST /v1/souls: ${r.status} ${JSON.stringify(r.body)}`);
    const dir = path.join(root, sid);
    const config = writeSoulConfig(dir, sid, endpoints, ca);
    const init = await soulInit(sid, config, r.body.bootstrap_token);
    if (init.code !== 0) throw new Error(`soul init ${sid}: ${init.stderr}`);
    const run = soulRun(sid, config);
    await waitForStatus(k, sid, 'connected', 30_000, run);
    return { sid, config, dir, run };
  };
  const workers = await Promise.allSettled(
    Array.from({ length: Math.min(5, covens.length) }, async () => {
      for (let i = next++; i < covens.length; i = next++) {
        try {
          out[i] = await one(covens[i]!, i);
        } catch (err) {
          next = covens.length; // start no more souls
          throw err;
        }
      }
    }),
  );
  const failed = workers.find((w): w is PromiseRejectedResult => w.status === 'rejected');
  if (failed) {
    // The souls already running are not the rig's yet: stopped here, or they would outlive it.
    await Promise.all(out.filter(Boolean).map((s) => s.run.kill()));
    throw failed.reason;
  }
  return out;
}
