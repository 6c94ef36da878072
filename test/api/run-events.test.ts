// Run progress without polling, on the real stack with real souls: the Server-Sent Events stream of
// a run (every host event, resumable with Last-Event-ID), `?wait=` on the run report, their bounds,
// and the commit-ordered numbering of host outcomes they rest on.
import assert from 'node:assert/strict';
import path from 'node:path';
import { takeSseEvents } from '../../common/sse';
import { repoRoot } from '../support/repo';
import type { TestKeeper } from '../support/keeper';
import { api, gitRepoFrom, settled, startRunKeeper, startSouls, tempDir, type TestSoul } from '../runs/keeper';
import fs from 'node:fs';
import knex from 'knex';
import { finishRun, insertRun, recordHosts } from '../../db/repos/runs';
import { setRunWaiting } from '../../db/repos/run-waiting';

interface SseEvent {
  id?: string;
  event: string;
  data: any;
}

/** Reads an SSE stream until `stop` says so (or the stream ends); the controller can abort it. */
async function readEvents(
  url: string,
  token: string,
  opts: { lastEventId?: string; stop?: (e: SseEvent, all: SseEvent[]) => boolean } = {},
): Promise<{ status: number; events: SseEvent[] }> {
  const ac = new AbortController();
  const res = await fetch(url, {
    headers: { Authorization: `Bearer ${token}`, ...(opts.lastEventId ? { 'Last-Event-ID': opts.lastEventId } : {}) },
    signal: ac.signal,
  });
  const events: SseEvent[] = [];
  if (res.status !== 200 || !res.body) {
    await res.text();
    return { status: res.status, events };
  }
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const taken = takeSseEvents(buf + dec.decode(value, { stream: true }));
      buf = taken.rest;
      for (const e of taken.events as SseEvent[]) {
        events.push(e);
        if (opts.stop?.(e, events)) {
          ac.abort();
          return { status: 200, events };
        }
      }
    }
  } catch (err) {
    if ((err as Error).name !== 'AbortError') throw err;
  }
  return { status: 200, events };
}

describe('run progress without polling: SSE events and ?wait (real stack, real souls)', function () {
  this.timeout(300_000);
  let k: TestKeeper;
  let root: string;
  let souls: TestSoul[];
  const input = () => ({ root: path.join(root, 'out'), message: `m-${Date.now()}`, package: 'git' });
  const eventsUrl = (applyId: string) => `${k.baseUrl}/v1/incarnations/motd-sse/runs/${applyId}/events`;

  before(async () => {
    root = tempDir('run-events-');
    const url = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'motd'),
      path.join(root, 'motd.git'),
      'v3',
    );
    k = await startRunKeeper();
    souls = await startSouls(k, path.join(root, 'souls'), [['edge'], ['edge'], ['edge']]);
    assert.equal((await api(k, 'POST', '/v1/services', { name: 'motd', git: url, ref: 'v3' })).status, 201);
    const r = await api(k, 'POST', '/v1/incarnations', {
      name: 'motd-sse',
      service: 'motd',
      covens: ['edge'],
      input: input(),
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal((await settled(k, 'motd-sse')).status, 'ready');
  });
  after(async () => {
    await Promise.all((souls ?? []).map((s) => s.run.kill()));
    await k?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('streams a live run: phases, render done, one host event per host with its counts, then the end', async () => {
    const r = await api(k, 'POST', '/v1/incarnations/motd-sse/runs', { operation: 'create', input: input() });
    assert.equal(r.status, 202);
    const { status, events } = await readEvents(eventsUrl(r.body.apply_id), k.adminToken);
    assert.equal(status, 200);
    const names = events.map((e) => e.event);
    assert.equal(names[names.length - 1], 'end');
    assert.equal(events[events.length - 1]!.data.status, 'succeeded');
    assert.ok(names.includes('render'), names.join(','));
    assert.equal(events.find((e) => e.event === 'render')!.data.hosts, 3);
    const hosts = events.filter((e) => e.event === 'host');
    assert.deepEqual(hosts.map((h) => h.data.sid).sort(), souls.map((s) => s.sid).sort());
    for (const h of hosts) {
      assert.equal(h.data.status, 'changed');
      assert.equal(h.data.steps, 3);
      assert.ok(h.data.changed >= 1);
      assert.equal(h.data.failed, 0);
    }
    const ids = hosts.map((h) => Number(h.id));
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => a - b),
      'host event ids increase',
    );
    assert.ok(names.indexOf('render') < names.indexOf('host'), 'render done comes before the first host');
  });

  it('resumes after Last-Event-ID: the events after it, none before, none missing; also after a disconnect mid-run', async () => {
    const r = await api(k, 'POST', '/v1/incarnations/motd-sse/runs', { operation: 'create', input: input() });
    // Disconnect right after the first host event of the live run.
    const first = await readEvents(eventsUrl(r.body.apply_id), k.adminToken, { stop: (e) => e.event === 'host' });
    const seen = first.events.filter((e) => e.event === 'host');
    assert.equal(seen.length, 1);
    const rest = await readEvents(eventsUrl(r.body.apply_id), k.adminToken, { lastEventId: seen[0]!.id! });
    const more = rest.events.filter((e) => e.event === 'host');
    assert.equal(rest.events[rest.events.length - 1]!.event, 'end');
    assert.deepEqual(
      [...seen, ...more].map((e) => e.data.sid).sort(),
      souls.map((s) => s.sid).sort(),
      'every host exactly once across the two streams',
    );
    assert.ok(more.every((e) => Number(e.id) > Number(seen[0]!.id)));

    // After the end, a resume from the first id gives exactly the later host events, then the end.
    const all = (await readEvents(eventsUrl(r.body.apply_id), k.adminToken)).events.filter((e) => e.event === 'host');
    const again = (await readEvents(eventsUrl(r.body.apply_id), k.adminToken, { lastEventId: all[0]!.id! })).events;
    assert.deepEqual(
      again.filter((e) => e.event === 'host').map((e) => e.id),
      all.slice(1).map((e) => e.id),
    );
  });

  it('?wait holds the run report until the run ends; bounded at 60s; a bad Last-Event-ID is a 400', async () => {
    const r = await api(k, 'POST', '/v1/incarnations/motd-sse/runs', { operation: 'create', input: input() });
    const held = await api(k, 'GET', `/v1/incarnations/motd-sse/runs/${r.body.apply_id}?wait=30s`);
    assert.equal(held.status, 200);
    assert.equal(held.body.status, 'succeeded', 'answered after the end, not while running');
    assert.ok(held.body.finished_at);
    const tooLong = await api(k, 'GET', `/v1/incarnations/motd-sse/runs/${r.body.apply_id}?wait=61s`);
    assert.equal(tooLong.status, 400);
    assert.equal(tooLong.body.errors[0].path, '/query/wait');
    const bad = await fetch(eventsUrl(r.body.apply_id), {
      headers: { Authorization: `Bearer ${k.adminToken}`, 'Last-Event-ID': 'yesterday' },
    });
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as any).detail, /Last-Event-ID/);
    const missing = await api(k, 'GET', '/v1/incarnations/motd-sse/runs/motd-sse.create.nope/events');
    assert.equal(missing.status, 404);
  });

  it('a run that clears its wait, finishes its next batch and ends between two looks of the stream: the stream still says the wait ended, before batch 2 and before the end', async () => {
    // The race made certain: the run's records are written with the run's own repository
    // functions, and everything after the wait is committed in one transaction, so no look of the
    // stream can see the run between the wait's end and its own end.
    const made = await api(k, 'POST', '/v1/incarnations', {
      name: 'sse-race',
      service: 'motd',
      covens: ['none'],
      input: input(),
      allow_empty: true,
    });
    assert.equal(made.status, 202, JSON.stringify(made.body));
    assert.equal((await settled(k, 'sse-race')).status, 'ready');
    const db = knex({ client: 'pg', connection: k.db.dsn });
    try {
      const applyId = `race-${Date.now()}`;
      const sids = souls.map((s) => s.sid);
      const outcome = (sid: string, batch: number) => ({
        sid,
        status: 'changed' as const,
        kid: null,
        reason: null,
        batch,
        started_at: null,
        finished_at: null,
      });
      await insertRun(db, { applyId, incarnation: 'sse-race', operation: 'create', input: {}, serviceRef: 'v3' });
      await db('incarnation_runs').where({ apply_id: applyId }).update({ phase: 'dispatching' });
      await db('run_hosts').insert(
        sids.map((sid, i) => ({ apply_id: applyId, sid, status: 'pending', batch: i === 0 ? 1 : 2 })),
      );
      await recordHosts(db, [outcome(sids[0]!, 1)], applyId);
      await setRunWaiting(db, applyId, { for: 'approval', batch: 1 });
      const url = `${k.baseUrl}/v1/incarnations/sse-race/runs/${applyId}/events`;
      const all: SseEvent[] = [];
      const rest = readEvents(url, k.adminToken, {
        stop: (_e, events) => {
          all.splice(0, all.length, ...events);
          return false;
        },
      });
      // Wait until the stream has told the wait, then end the wait, batch 2 and the run at once.
      for (let i = 0; i < 100 && !all.some((e) => e.event === 'waiting'); i++)
        await new Promise((r) => setTimeout(r, 50));
      assert.ok(
        all.some((e) => e.event === 'waiting'),
        'the stream told the wait',
      );
      await db.transaction(async (trx) => {
        await setRunWaiting(trx, applyId, null);
        await recordHosts(
          trx,
          sids.slice(1).map((sid) => outcome(sid, 2)),
          applyId,
        );
        await finishRun(trx, applyId, { status: 'succeeded', summary: { hosts: { changed: sids.length } } });
      });
      const { events } = await rest;
      const names = events.map((e) => (e.event === 'waiting' ? `waiting:${e.data.waiting ? 'on' : 'off'}` : e.event));
      assert.deepEqual(
        names,
        [
          'phase',
          'phase',
          'phase',
          'render',
          'batch',
          'host',
          'waiting:on',
          'waiting:off',
          'batch',
          'host',
          'host',
          'phase',
          'end',
        ],
        names.join(','),
      );
      assert.deepEqual(events[6]!.data.waiting.batch, 1);
      assert.deepEqual(events[events.length - 1]!.data.status, 'succeeded');
    } finally {
      await db.destroy();
    }
  });

  it('bounds held connections per operator: the ninth stream is a 429 with Retry-After until one closes', async () => {
    // Streams of a finished run end at once; hold eight open on an unfinished one instead: with one
    // soul stopped (SIGSTOP), the run stays in dispatch until that host times out.
    souls[2]!.run.child.kill('SIGSTOP');
    try {
      const run = await api(k, 'POST', '/v1/incarnations/motd-sse/runs', { operation: 'create', input: input() });
      assert.equal(run.status, 202);
      const controllers = Array.from({ length: 8 }, () => new AbortController());
      const held = controllers.map((c) =>
        fetch(eventsUrl(run.body.apply_id), { headers: { Authorization: `Bearer ${k.adminToken}` }, signal: c.signal }),
      );
      const opened = await Promise.all(held);
      assert.deepEqual(
        opened.map((o) => o.status),
        Array(8).fill(200),
      );
      const ninth = await fetch(`${k.baseUrl}/v1/incarnations/motd-sse/runs/${run.body.apply_id}?wait=5s`, {
        headers: { Authorization: `Bearer ${k.adminToken}` },
      });
      assert.equal(ninth.status, 429);
      assert.equal(ninth.headers.get('retry-after'), '5');
      controllers[0]!.abort();
      await opened[0]!.body?.cancel().catch(() => undefined);
      // The slot comes back once the keeper notices the closed connection.
      let status = 0;
      for (let i = 0; i < 50 && status !== 200; i++) {
        await new Promise((res) => setTimeout(res, 100));
        status = (
          await fetch(`${k.baseUrl}/v1/incarnations/motd-sse/runs/${run.body.apply_id}?wait=1ms`, {
            headers: { Authorization: `Bearer ${k.adminToken}` },
          })
        ).status;
      }
      assert.equal(status, 200);
      for (const c of controllers) c.abort();
    } finally {
      souls[2]!.run.child.kill('SIGCONT');
    }
  });
});
