import assert from 'node:assert/strict';
import type { HostEvent, RunHead } from '../../db/repos/run-events';
import { RunEventOrder, type RunEvent } from './run-event-order';

const wait1 = { for: 'approval' as const, batch: 1, since: '2026-11-29T05:00:00.000Z' };

function head(over: Partial<RunHead>): RunHead {
  return {
    apply_id: 'a1',
    incarnation: 'gated',
    operation: 'create',
    status: 'running',
    phase: 'dispatching',
    error: null,
    summary: null,
    finished_at: null,
    hosts: 4,
    waiting: null,
    ...over,
  };
}

let seq = 0;
function host(sid: string, batch: number): HostEvent {
  seq += 1;
  return { seq, sid, status: 'changed', reason: null, batch, steps: 1, changed: 1, failed: 0, finished_at: null };
}

const names = (evs: RunEvent[]) =>
  evs.map((e) => (e.event === 'waiting' ? `waiting:${e.data && (e.data as any).waiting ? 'on' : 'off'}` : e.event));

describe('run event order: every transition told, whatever the timing of the looks', () => {
  it('a run that clears its gate, runs batch 2 and ends between two looks: the wait ends before batch 2 and before the end', () => {
    const o = new RunEventOrder();
    const first = o.look(head({ waiting: wait1 }), [host('s1', 1), host('s2', 1)]);
    assert.deepEqual(names(first), ['phase', 'phase', 'phase', 'render', 'batch', 'host', 'host', 'waiting:on']);
    // The next look finds the run already succeeded: the head no longer says it ever waited.
    const second = o.look(
      head({ status: 'succeeded', phase: 'done', waiting: null, summary: { hosts: { changed: 4 } } }),
      [host('s3', 2), host('s4', 2)],
    );
    assert.deepEqual(names(second), ['waiting:off', 'batch', 'host', 'host', 'phase', 'end']);
    assert.deepEqual(second[0]!.data, { waiting: null });
    assert.deepEqual(second[4]!.data, { phase: 'committing' });
    assert.equal(o.done, true);
    assert.deepEqual(o.look(head({ status: 'succeeded', phase: 'done' }), []), [], 'nothing after the end');
  });

  it('a wait that ended while the next batch has not finished a host yet is told on the next look', () => {
    const o = new RunEventOrder();
    o.look(head({ waiting: wait1 }), [host('s1', 1)]);
    assert.deepEqual(names(o.look(head({ waiting: null }), [])), ['waiting:off']);
    assert.deepEqual(names(o.look(head({ waiting: null }), [host('s2', 2)])), ['batch', 'host']);
  });

  it('one wait after batch 1 and another after batch 2, both passed between looks: each begins and ends in order', () => {
    const o = new RunEventOrder();
    o.look(head({ waiting: wait1 }), [host('s1', 1)]);
    const wait2 = { for: 'health' as const, batch: 2, health: 'up', since: '2026-11-29T05:01:00.000Z' };
    const evs = o.look(head({ waiting: wait2 }), [host('s2', 2)]);
    assert.deepEqual(names(evs), ['waiting:off', 'batch', 'host', 'waiting:on']);
    assert.deepEqual(evs[3]!.data, { waiting: wait2 });
  });

  it('phases skipped between looks are still told, in order; committing after the last host', () => {
    const o = new RunEventOrder();
    assert.deepEqual(
      o.look(head({ phase: 'queued', hosts: 0 }), []).map((e) => e.data),
      [{ phase: 'queued' }],
    );
    const evs = o.look(head({ phase: 'committing', hosts: 1 }), [host('s1', 1)]);
    assert.deepEqual(
      evs.map((e) => e.event),
      ['phase', 'phase', 'render', 'batch', 'host', 'phase'],
    );
    assert.deepEqual(
      evs.filter((e) => e.event === 'phase').map((e) => (e.data as any).phase),
      ['rendering', 'dispatching', 'committing'],
    );
  });

  it('a run that failed at render tells no phase it never reached and no render', () => {
    const o = new RunEventOrder();
    o.look(head({ phase: 'rendering', hosts: 0 }), []);
    const evs = o.look(head({ status: 'failed', phase: 'done', hosts: 0, error: 'render failed' }), []);
    assert.deepEqual(names(evs), ['end']);
  });

  it('a stream opened after the end tells the recorded story once: phases, render, hosts, end', () => {
    const o = new RunEventOrder();
    const evs = o.look(head({ status: 'succeeded', phase: 'done', hosts: 1 }), [host('s1', 1)]);
    assert.deepEqual(names(evs), ['phase', 'phase', 'phase', 'render', 'batch', 'host', 'phase', 'end']);
    assert.equal(evs[5]!.id, seq, 'the host event carries its number for Last-Event-ID');
  });
});
