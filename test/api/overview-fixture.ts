// A small fleet with a past, for the overview tests (API and browser): souls registered through the
// API whose status history is moved back in time, incarnations locked and drifted, and runs spread
// over the last day and earlier. Statuses, incarnations and runs are written to the database
// directly: live souls and real runs are not what the overview is about, their aggregation is.
import assert from 'node:assert/strict';
import type { TestKeeper } from '../support/keeper';
import { clientFor } from './helpers';

export const SOULS = Array.from({ length: 12 }, (_, i) => `node${i + 1}.ov.example.com`);
const MIN = 60_000;
const HOUR = 60 * MIN;

export interface FixtureRun {
  apply_id: string;
  incarnation: string;
  status: string;
  agoMin: number;
  durationS: number | null;
  hosts: number;
  changed: number;
  failed: number;
  kind?: string;
  error?: string;
}

export const RUNS: FixtureRun[] = [
  {
    apply_id: 'web.create.1',
    incarnation: 'web',
    status: 'succeeded',
    agoMin: 30 * 60,
    durationS: 40,
    hosts: 12,
    changed: 12,
    failed: 0,
  },
  {
    apply_id: 'web.apply.2',
    incarnation: 'web',
    status: 'succeeded',
    agoMin: 150,
    durationS: 10,
    hosts: 12,
    changed: 3,
    failed: 0,
  },
  {
    apply_id: 'web.apply.3',
    incarnation: 'web',
    status: 'succeeded',
    agoMin: 140,
    durationS: 20,
    hosts: 12,
    changed: 0,
    failed: 0,
  },
  {
    apply_id: 'db.apply.1',
    incarnation: 'db',
    status: 'failed',
    agoMin: 330,
    durationS: 60,
    hosts: 4,
    changed: 1,
    failed: 2,
    error: 'node3.ov.example.com failed: permission denied',
  },
  {
    apply_id: 'cache.apply.1',
    incarnation: 'cache',
    status: 'succeeded',
    agoMin: 90,
    durationS: 5,
    hosts: 2,
    changed: 2,
    failed: 0,
  },
  // (No run is left running: the keeper would rightly fail a running run that has no workflow.)
  {
    apply_id: 'cache.apply.2',
    incarnation: 'cache',
    status: 'succeeded',
    agoMin: 10,
    durationS: 3,
    hosts: 2,
    changed: 0,
    failed: 0,
  },
  // A plan is not a run: the overview leaves it out.
  {
    apply_id: 'web.plan.1',
    incarnation: 'web',
    status: 'succeeded',
    agoMin: 20,
    durationS: 1,
    hosts: 12,
    changed: 5,
    failed: 0,
    kind: 'plan',
  },
];

/** 12 souls: 10 connected 150 minutes ago, 3 of them disconnected just now; 2 still pending. */
export async function seedOverview(tk: TestKeeper): Promise<void> {
  const api = clientFor(tk);
  const db = tk.keeper.runtime.db;
  for (const sid of SOULS) {
    const r = await api('POST', '/v1/souls', { body: { sid, transport: 'agent', covens: ['web'] } });
    assert.equal(r.status, 201, r.text);
  }
  await db('souls').whereIn('sid', SOULS.slice(0, 10)).update({ status: 'connected', last_seen_at: new Date() });
  await db.raw("update soul_status_changes set at = now() - interval '150 minutes'");
  await db('souls').whereIn('sid', SOULS.slice(0, 3)).update({ status: 'disconnected' });

  await db('services').insert({ name: 'site', git: 'file:///srv/site.git', ref: 'v1' });
  await db('incarnations').insert([
    { name: 'web', service: 'site', covens: ['web'], status: 'ready', drift_status: 'in_sync' },
    { name: 'db', service: 'site', covens: ['web'], status: 'error_locked', drift_status: 'unchecked' },
    {
      name: 'cache',
      service: 'site',
      covens: ['web'],
      status: 'applying',
      drift_status: 'drifted',
      drifted_sids: ['node4.ov.example.com'],
    },
  ]);
  const now = Date.now();
  for (const r of RUNS) {
    const created = new Date(now - r.agoMin * MIN);
    await db('incarnation_runs').insert({
      apply_id: r.apply_id,
      incarnation: r.incarnation,
      operation: r.apply_id.split('.')[1],
      status: r.status,
      phase: r.status === 'running' ? 'apply' : 'done',
      kind: r.kind ?? 'run',
      error: r.error ?? null,
      created_at: created,
      finished_at: r.durationS === null ? null : new Date(created.getTime() + r.durationS * 1000),
    });
    await db('run_hosts').insert(
      SOULS.slice(0, r.hosts).map((sid, i) => ({
        apply_id: r.apply_id,
        sid,
        status:
          i < r.failed ? 'failed' : i < r.failed + r.changed ? 'changed' : r.status === 'running' ? 'pending' : 'ok',
      })),
    );
  }
  await db('incarnations').where({ name: 'db' }).update({ last_apply_id: 'db.apply.1' });
  await db('incarnations').where({ name: 'web' }).update({ last_apply_id: 'web.apply.3' });
  await db('incarnations').where({ name: 'cache' }).update({ last_apply_id: 'cache.apply.2' });
}

export const HOUR_MS = HOUR;
export const ranRuns = () => RUNS.filter((r) => (r.kind ?? 'run') === 'run');

/** percentile_cont: linear interpolation between the closest ranks. */
export function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  const x = p * (s.length - 1);
  const lo = Math.floor(x);
  return Math.round(s[lo] + (s[Math.min(lo + 1, s.length - 1)] - s[lo]) * (x - lo));
}
