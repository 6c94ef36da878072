// The dispatch pool: how many hosts are worked at once, that a cancelled dispatch takes no new host,
// and that finished hosts reach the database with the heartbeat, in order, a failed write failing the dispatch.
import assert from 'node:assert/strict';
import type { StepRow } from '../../db/repos/runs';
import { DispatchReport, runPool, type DispatchHostRow } from './dispatch-pool';

const host = (sid: string): DispatchHostRow => ({
  sid,
  status: 'ok',
  kid: 'k1',
  reason: null,
  batch: 0,
  started_at: null,
  finished_at: null,
});
const step = (sid: string, i: number): StepRow => ({
  apply_id: 'a',
  sid,
  step_index: i,
  name: null,
  module: 'core.cmd.run',
  status: 'ok',
  changed: false,
  output: '',
  attempts: 1,
  replayed: false,
  started_at: null,
  finished_at: null,
  skip_reason: null,
});

describe('dispatch pool', () => {
  it('works every host once, never more than the concurrency at a time', async () => {
    let inFlight = 0;
    let most = 0;
    const seen: string[] = [];
    const gates: (() => void)[] = [];
    const sids = Array.from({ length: 10 }, (_, i) => `h${i}`);
    const all = runPool(sids, 3, new AbortController().signal, async (sid) => {
      inFlight++;
      most = Math.max(most, inFlight);
      seen.push(sid);
      await new Promise<void>((r) => gates.push(r));
      inFlight--;
    });
    // Release one worker at a time until every host was taken.
    while (seen.length < sids.length || gates.length > 0) {
      await new Promise((r) => setImmediate(r));
      gates.shift()?.();
    }
    await all;
    assert.equal(most, 3);
    assert.deepEqual(seen, sids);
  });

  it('takes no new host once the dispatch is cancelled', async () => {
    const ac = new AbortController();
    const seen: string[] = [];
    await runPool(['a', 'b', 'c', 'd'], 1, ac.signal, async (sid) => {
      seen.push(sid);
      if (sid === 'b') ac.abort();
    });
    assert.deepEqual(seen, ['a', 'b']);
  });

  it('writes finished hosts with the heartbeat and reports progress; a moved host is not counted done', async () => {
    const writes: { hosts: string[]; steps: number }[] = [];
    const beats: { done: number; of: number }[] = [];
    const r = new DispatchReport(
      async (h, s) => {
        writes.push({ hosts: h.map((x) => x.sid), steps: s.length });
      },
      (p) => beats.push(p),
      3,
    );
    r.tick();
    r.add(host('h1'), [step('h1', 0), step('h1', 1)]);
    r.add(host('h2'), [], false);
    r.tick();
    await r.close();
    assert.deepEqual(beats, [
      { done: 0, of: 3 },
      { done: 1, of: 3 },
    ]);
    // Nothing written before a host finished; the heartbeat wrote both rows; close had nothing left.
    assert.deepEqual(writes, [
      { hosts: ['h1', 'h2'], steps: 2 },
      { hosts: [], steps: 0 },
    ]);
  });

  it('asks for a write once enough steps wait, and a failed write fails the dispatch at close', async () => {
    let calls = 0;
    const r = new DispatchReport(
      async () => {
        calls++;
        if (calls === 1) throw new Error('database down');
      },
      () => {},
      1,
      2,
    );
    r.add(host('h1'), [step('h1', 0)]);
    assert.equal(r.full, false);
    r.add(host('h2'), [step('h2', 0)]);
    assert.equal(r.full, true);
    await r.write();
    await assert.rejects(r.close(), /database down/);
  });
});
