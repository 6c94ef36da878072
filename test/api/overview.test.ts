// GET /v1/overview against a real keeper and PostgreSQL: every figure of the fleet overview (issue
// 35) from a fleet with a known past (overview-fixture.ts), and who may read it.
import assert from 'node:assert/strict';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { assertProblem, call, clientFor, operatorToken } from './helpers';
import { percentile, ranRuns, seedOverview } from './overview-fixture';

describe('Operator API: overview', function () {
  this.timeout(60_000);
  let tk: TestKeeper;
  let o: any;

  before(async () => {
    tk = await startTestKeeper();
    await seedOverview(tk);
    const a = await clientFor(tk)('GET', '/v1/overview');
    assert.equal(a.status, 200, a.text);
    o = a.body;
  });
  after(async () => {
    await tk?.stop();
  });

  it('counts souls by status with the change over the last hour', () => {
    assert.deepEqual(o.souls.by_status, { pending: 2, connected: 7, disconnected: 3, revoked: 0 });
    assert.equal(o.souls.total, 12);
    assert.deepEqual(o.souls.change_1h, { pending: 0, connected: -3, disconnected: 3, revoked: 0 });
  });

  it('gives connected souls over the last 24 h from the recorded status changes', () => {
    const series = o.charts.connected_souls.map((p: { connected: number }) => p.connected);
    assert.equal(series.length, 25);
    // 10 connected 150 minutes ago, 3 dropped now: none before, 10 in between, 7 now.
    assert.deepEqual(series, [...Array(22).fill(0), 10, 10, 7]);
  });

  it('counts incarnations by status and drift, and names the locked and drifted ones with their reason', () => {
    assert.deepEqual(o.incarnations.by_status, { ready: 1, applying: 1, error_locked: 1 });
    assert.deepEqual(o.incarnations.by_drift, { in_sync: 1, drifted: 1, unchecked: 1, check_failed: 0 });
    assert.deepEqual(o.attention, [
      {
        incarnation: 'db',
        status: 'error_locked',
        drift_status: 'unchecked',
        drifted_hosts: [],
        apply_id: 'db.apply.1',
        reason: 'node3.ov.example.com failed: permission denied',
      },
      {
        incarnation: 'cache',
        status: 'applying',
        drift_status: 'drifted',
        drifted_hosts: ['node4.ov.example.com'],
        apply_id: 'cache.apply.2',
        reason: 'drifted on 1 host',
      },
    ]);
  });

  it('lists the failed runs of the last day and the last runs, plans left out', () => {
    assert.deepEqual(
      o.failed_runs.map((r: any) => [r.apply_id, r.hosts, r.hosts_failed, r.duration_ms]),
      [['db.apply.1', 4, 2, 60_000]],
    );
    assert.deepEqual(
      o.last_runs.map((r: any) => r.apply_id),
      ['cache.apply.2', 'cache.apply.1', 'web.apply.3', 'web.apply.2', 'db.apply.1', 'web.create.1'],
    );
    assert.equal(o.last_runs[0].duration_ms, 3000);
  });

  it('counts runs per hour by outcome over 24 full hours', () => {
    const hours = o.charts.runs_per_hour;
    assert.equal(hours.length, 24);
    const nonzero = hours.flatMap((h: any, i: number) =>
      h.succeeded + h.failed + h.running ? [[23 - i, h.succeeded, h.failed, h.running]] : [],
    );
    // [hours ago, succeeded, failed, running]: 330 min -> 5, 150 and 140 min -> 2, 90 min -> 1, 10 min -> 0.
    assert.deepEqual(nonzero, [
      [5, 0, 1, 0],
      [2, 2, 0, 0],
      [1, 1, 0, 0],
      [0, 1, 0, 0],
    ]);
  });

  it('gives run duration median and p95 per UTC day, and hosts changed per finished run', () => {
    const byDay = new Map<string, number[]>();
    const now = Date.parse(o.generated_at);
    for (const r of ranRuns().filter((r) => r.durationS !== null)) {
      const day = new Date(now - r.agoMin * 60_000).toISOString().slice(0, 10);
      byDay.set(day, [...(byDay.get(day) ?? []), r.durationS! * 1000]);
    }
    const want = [...byDay.entries()].sort().map(([day, ms]) => ({
      day: `${day}T00:00:00.000Z`,
      runs: ms.length,
      median_ms: percentile(ms, 0.5),
      p95_ms: percentile(ms, 0.95),
    }));
    assert.deepEqual(o.charts.duration_per_day, want);
    assert.deepEqual(
      o.charts.hosts_changed_per_run.map((r: any) => [r.apply_id, r.hosts_changed, r.hosts]),
      [
        ['web.create.1', 12, 12],
        ['db.apply.1', 1, 4],
        ['web.apply.2', 3, 12],
        ['web.apply.3', 0, 12],
        ['cache.apply.1', 2, 2],
        ['cache.apply.2', 0, 2],
      ],
    );
  });

  it('is readable by a viewer and refused without a token; it is in the OpenAPI document', async () => {
    const viewer = await operatorToken(tk, 'overview-viewer', 'viewer');
    assert.equal((await call(tk.baseUrl, 'GET', '/v1/overview', { token: viewer })).status, 200);
    assertProblem(await call(tk.baseUrl, 'GET', '/v1/overview', { token: null }), 401);
    const doc = await call(tk.baseUrl, 'GET', '/openapi.json', { token: null });
    assert.equal(doc.status, 200, doc.text.slice(0, 200));
    assert.equal(doc.body.paths['/v1/overview'].get.operationId, 'getOverview');
  });
});
