// A keeper for the run tests: test/support's keeper (own database, secret, queue, ports) started
// (optionally with a replaced scenario engine), plus souls (real `bin/soul` processes in their own UTS
// namespaces) registered in given covens, onboarded and connected.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { silentLogger } from '../../common/logger';
import type { ScenarioPort } from '../../activities/scenario-port';
import { loadConfig } from '../../keeper/config/load';
import { keeperInit } from '../../keeper/init';
import { openCore } from '../../keeper/runtime';
import { startKeeper } from '../../keeper/server';
import { cleanupKeeperFiles, prepareKeeperConfig, type TestKeeper } from '../support/keeper';
import { api, endpointOf, soulInit, soulRun, uniqueSid, waitFor, waitForStatus, writeSoulConfig, type RunningSoul } from '../agents/harness';

export async function startRunKeeper(scenario?: ScenarioPort): Promise<TestKeeper> {
  const files = await prepareKeeperConfig();
  const config = loadConfig(files.configFile);
  const core = await openCore(config, silentLogger);
  const credential = path.join(files.dir, 'admin.jwt');
  try {
    await keeperInit({ db: core.db, signingKey: core.signingKey, issuer: config.auth.jwt.issuer, ttlMs: config.auth.jwt.ttl_bootstrap_ms, aid: 'admin', credentialOut: credential });
  } finally {
    await core.close();
  }
  const keeper = await startKeeper(config, silentLogger, { scenario });
  return {
    ...files, config, keeper, baseUrl: `http://${config.listen.openapi.addr}`, metricsUrl: `http://${config.listen.metrics.addr}`,
    adminToken: fs.readFileSync(credential, 'utf8').trim(),
    async stop() { await keeper.stop(); await cleanupKeeperFiles(files); },
  };
}

export interface TestSoul { sid: string; config: string; dir: string; run: RunningSoul }

/** Registers, onboards and connects one soul per entry of `covens`. */
export async function startSouls(k: TestKeeper, root: string, covens: string[][]): Promise<TestSoul[]> {
  return Promise.all(covens.map(async (c, i) => {
    const sid = uniqueSid(`host${i + 1}`);
    const r = await api(k, 'POST', '/v1/souls', { sid, transport: 'agent', covens: c });
    if (r.status !== 201) throw new Error(`POST /v1/souls: ${r.status} ${JSON.stringify(r.body)}`);
    const dir = path.join(root, sid);
    const config = writeSoulConfig(dir, sid, [endpointOf(k)]);
    const init = await soulInit(sid, config, r.body.bootstrap_token);
    if (init.code !== 0) throw new Error(`soul init ${sid}: ${init.stderr}`);
    const run = soulRun(sid, config);
    await waitForStatus(k, sid, 'connected', 20_000);
    return { sid, config, dir, run };
  }));
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Polls the incarnation until it leaves `applying`; returns its record. */
export async function settled(k: TestKeeper, name: string, timeoutMs = 60_000): Promise<any> {
  return waitFor(`${name} to settle`, async () => {
    const r = await api(k, 'GET', `/v1/incarnations/${name}`);
    return r.status === 200 && r.body.status !== 'applying' ? r.body : undefined;
  }, timeoutMs, 200);
}

export { api, waitFor };
