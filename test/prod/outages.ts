// The outage table of docs/reliability.md re-run on the rehearsal's topology (issue 33): real souls
// from dist/ on this machine connected to both packaged keepers by priority (A first), a service
// whose steps are slow enough for a fault to land mid-run, and one row per fault: a run is started,
// the fault lands while it dispatches, and the row records when both keepers' /readyz said every
// dependency up again and when the run ended. A run that ends `error_locked` is retried by the
// operator's unlock and must end `ready`; the row says so.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import {
  endpointOf,
  soulInit,
  soulRun,
  uniqueSid,
  waitForStatus,
  writeSoulConfig,
  type KeeperAccess,
} from '../agents/harness';
import { api, gitRepoFrom, tempDir, waitFor, type TestSoul } from '../runs/keeper';
import { ledgerLines } from '../faults/history';
import { writeSlowService } from '../faults/rig';

export const ALL_UP = { database: 'up', cache: 'up', temporal: 'up', secretstore: 'up' };

export async function readyz(
  baseUrl: string,
): Promise<{ status: number; checks: Record<string, string>; degraded: string[] }> {
  try {
    const r = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(10_000) });
    const body = (await r.json()) as { checks: Record<string, string>; degraded: string[] };
    return { status: r.status, checks: body.checks, degraded: body.degraded };
  } catch {
    return { status: 0, checks: {}, degraded: [] };
  }
}

/**
 * Waits until one of the keepers' /readyz names `dep` down (the fault is seen). Whether it is still
 * ready depends on `dep`: the database and the cache decide readiness, Temporal and the store are
 * reported as degraded (issue 45); the callers assert the status.
 */
export async function seenDown(keepers: KeeperAccess[], dep: string, timeoutMs = 60_000): Promise<void> {
  await waitFor(
    `${dep} down in a keeper's /readyz`,
    async () => {
      for (const k of keepers) {
        const r = await readyz(k.baseUrl);
        if (r.checks[dep] === 'down') return true;
      }
      return false;
    },
    timeoutMs,
    100,
  );
}

export interface Row {
  fault: string;
  /** ms from the fault to its end (the dependency back, or the fault function returned) */
  healedMs: number;
  /** ms from the fault to both keepers' /readyz 200 with every dependency up */
  readyMs: number;
  /** ms from the fault to the run's end */
  endMs: number;
  first: string;
  /** what the locked run said, when it locked */
  why?: string;
}

export interface Fleet {
  service: string;
  souls: TestSoul[];
  out: string;
  rows: Row[];
  /** One fault on a run mid-dispatch; `fault` returns once the fault has been healed (or left to heal). */
  row(label: string, fault: () => Promise<void>): Promise<Row>;
  stop(): Promise<void>;
}

/** The slow service in a git repository at `at` on every keeper's root (`place` copies it there). */
export function slowService(name: string): { src: string; repo: string } {
  const dir = tempDir('prod-svc-');
  const src = path.join(dir, 'src');
  writeSlowService(src, 4, 1);
  fs.writeFileSync(path.join(src, 'service.yml'), `name: ${name}\nstate_schema_version: 1\n`);
  return { src: dir, repo: gitRepoFrom(src, path.join(dir, 'repo.git'), 'v1').replace(/^file:\/\//, '') };
}

export async function startFleet(
  keepers: KeeperAccess[],
  soulCa: string,
  service: string,
  gitUrl: string,
  souls = 4,
): Promise<Fleet> {
  const root = tempDir('prod-fleet-');
  const out = path.join(root, 'out');
  const k = () => keepers[0]!;
  const endpoints = keepers.map((x, i) => endpointOf(x, 10 * (i + 1)));
  // A coven of this fleet's own: keeper_prod keeps the souls of earlier test runs (disconnected).
  const coven = `prod-${randomBytes(3).toString('hex')}`;
  const fleet: Fleet = {
    service,
    out,
    souls: [],
    rows: [],
    async row(label, fault) {
      const slug = label
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-|-$/g, '');
      const name = `${slug}-${randomBytes(3).toString('hex')}`;
      const r = await api(k(), 'POST', '/v1/incarnations', {
        name,
        service,
        covens: [coven],
        input: { root: path.join(out, name) },
      });
      assert.equal(r.status, 202, JSON.stringify(r.body));
      const applyId = r.body.apply_id as string;
      await waitFor(
        'the run to be mid-dispatch',
        async () => fleet.souls.some((s) => ledgerLines(s, applyId).length > 0),
        120_000,
        100,
      );
      const t0 = Date.now();
      await fault();
      const healedMs = Date.now() - t0;
      const ready = waitFor(
        'both keepers ready with every dependency up',
        async () => {
          for (const x of keepers) {
            const z = await readyz(x.baseUrl);
            if (z.status !== 200 || !isDeepStrictEqual(z.checks, ALL_UP)) return undefined;
          }
          return Date.now() - t0;
        },
        300_000,
        100,
      );
      const inc = await settled(keepers, name);
      const first = inc.status as string;
      const endMs = Date.now() - t0;
      const row: Row = { fault: label, healedMs, readyMs: await ready, endMs, first };
      if (first === 'error_locked') row.why = JSON.stringify(inc.last_run?.error ?? inc.last_run ?? null);
      fleet.rows.push(row);
      if (first === 'error_locked') {
        const u = await anyKeeper(keepers, 'POST', `/v1/incarnations/${name}/unlock`, { retry: true });
        assert.equal(u.status, 202, JSON.stringify(u.body));
        assert.equal((await settled(keepers, name)).status, 'ready', `${label}: the retried run ends ready`);
      } else assert.equal(first, 'ready', `${label}: the run ends ready`);
      // Every step applied on every soul: four files in each host's folder.
      const hosts = fs.readdirSync(path.join(out, name));
      assert.equal(hosts.length, fleet.souls.length, `${label}: every soul wrote its files`);
      for (const h of hosts) assert.deepEqual(fs.readdirSync(path.join(out, name, h)).sort(), ['f0', 'f1', 'f2', 'f3']);
      return row;
    },
    async stop() {
      await Promise.all(fleet.souls.map((s) => s.run.kill()));
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
  try {
    const reg = await api(k(), 'POST', '/v1/services', { name: service, git: gitUrl, ref: 'v1' });
    assert.equal(reg.status, 201, JSON.stringify(reg.body));
    fleet.souls = await Promise.all(
      Array.from({ length: souls }, async (_, i) => {
        const sid = uniqueSid(`prod${i + 1}`);
        const r = await api(k(), 'POST', '/v1/souls', { sid, transport: 'agent', covens: [coven] });
        assert.equal(r.status, 201, JSON.stringify(r.body));
        const dir = path.join(root, 'souls', sid);
        const config = writeSoulConfig(dir, sid, endpoints, soulCa);
        const init = await soulInit(sid, config, r.body.bootstrap_token);
        if (init.code !== 0) throw new Error(`soul init ${sid}: ${init.stderr}`);
        const run = soulRun(sid, config);
        await waitForStatus(k(), sid, 'connected', 60_000, run);
        return { sid, config, dir, run };
      }),
    );
  } catch (err) {
    await fleet.stop();
    throw err;
  }
  return fleet;
}

/** The first keeper that answers (one may be down on purpose). */
export async function anyKeeper(keepers: KeeperAccess[], method: string, url: string, body?: unknown) {
  let last: any;
  for (const x of keepers) {
    try {
      last = await api(x, method, url, body);
      if (last.status < 500) return last;
    } catch (err) {
      last = { status: 0, body: String(err) };
    }
  }
  return last;
}

async function settled(keepers: KeeperAccess[], name: string): Promise<any> {
  return waitFor(
    `${name} to settle`,
    async () => {
      const r = await anyKeeper(keepers, 'GET', `/v1/incarnations/${name}`);
      return r.status === 200 && r.body.status !== 'applying' ? r.body : undefined;
    },
    300_000,
    100,
  );
}
