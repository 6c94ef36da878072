// The failover watch's decisions (runs/failover.ts) with the cache and Temporal client faked: which
// keeper's dispatch is ended, with what failure, and when nothing is done. The real cache, workers
// and a real SIGKILL are in test/faults/two-keepers.test.ts.
import assert from 'node:assert/strict';
import { ApplicationFailure } from '@temporalio/common';
import { silentLogger } from '../common/logger';
import { claimLapsed, failoverComponent, KEEPER_LOST } from './failover';
import type { Cache } from '../platform/cache';
import type { TemporalClientHolder } from './connection';
import { inflightKidsKey } from './activities/inflight';

/** pTTL answers in turn (the last one repeats), as the cache would show a claim over time. */
function claimCache(
  ttls: Record<string, number[]>,
  inflight: Record<string, Record<string, string>> = {},
  leases: Record<string, string> = {},
) {
  const hashes = Object.fromEntries(Object.entries(inflight).map(([k, v]) => [k, new Map(Object.entries(v))]));
  return {
    // Souls' presence leases (sid -> kid) and the kid claims of live keepers (those with a TTL left).
    async mGet(keys: string[]) {
      return keys.map((key) => {
        if (key.startsWith('keeper:presence:')) {
          const kid = leases[key.slice('keeper:presence:'.length)];
          return kid ? JSON.stringify({ kid, epoch: 1 }) : null;
        }
        const seq = ttls[key.replace('keeper:kid:', '')] ?? [-2];
        return seq[0] === -2 ? null : 'claim';
      });
    },
    async pTTL(key: string) {
      const seq = ttls[key.replace('keeper:kid:', '')] ?? [-2];
      return seq.length > 1 ? seq.shift()! : seq[0];
    },
    async sMembers(key: string) {
      // The cluster of these keepers is the task queue 'q' (activities/inflight.ts).
      return key === inflightKidsKey('q') ? Object.keys(hashes) : [];
    },
    async hLen(key: string) {
      return hashes[key.replace('keeper:dispatch-inflight:', '')]?.size ?? 0;
    },
    async hGetAll(key: string) {
      return Object.fromEntries(hashes[key.replace('keeper:dispatch-inflight:', '')] ?? []);
    },
    async hDel(key: string, field: string) {
      return hashes[key.replace('keeper:dispatch-inflight:', '')]?.delete(field) ? 1 : 0;
    },
  } as unknown as Cache;
}

function fakeTemporal() {
  const failed: { token: string; err: ApplicationFailure }[] = [];
  const reset: string[] = [];
  const holder = {
    namespace: 'default',
    client: {
      activity: {
        async fail(token: Uint8Array, err: ApplicationFailure) {
          failed.push({ token: Buffer.from(token).toString('base64'), err });
        },
      },
      workflowService: {
        async resetStickyTaskQueue(req: { execution: { workflowId: string } }) {
          reset.push(req.execution.workflowId);
          return {};
        },
      },
    },
  } as unknown as TemporalClientHolder;
  return { holder, failed, reset };
}

const entry = (applyId: string, workflowId = applyId, sids?: string[]) =>
  JSON.stringify({ apply_id: applyId, hosts: 2, sids, since: 0, workflow_id: workflowId, run_id: 'r1' });

function rig(
  ttls: Record<string, number[]>,
  inflight: Record<string, Record<string, string>>,
  sweepMs = 60_000,
  queue = 'q',
  leases: Record<string, string> = {},
) {
  const t = fakeTemporal();
  let connected: (sid: string) => void = () => undefined;
  const c = failoverComponent(
    {
      cache: claimCache(ttls, inflight, leases),
      temporal: t.holder,
      kid: 'B',
      queue,
      log: silentLogger,
      sessions: { onConnected: (l) => (connected = l) },
    },
    { pollMs: 1, watchMs: 2_000, sweepMs },
  );
  return { ...t, c, connect: (sid: string) => connected(sid) };
}

describe('claimLapsed: is a keeper gone, by its kid claim', () => {
  it('says gone when the claim runs out, renewed when its TTL goes back up', async () => {
    assert.equal(await claimLapsed(claimCache({ A: [2500, 1800, 900, -2] }), 'A', 1, 2_000), true);
    assert.equal(await claimLapsed(claimCache({ A: [2500, 1800, 2990] }), 'A', 1, 2_000), false);
  });
  it('says neither when the claim neither goes nor is renewed within the watch', async () => {
    assert.equal(await claimLapsed(claimCache({ A: [-1] }), 'A', 1, 20), null);
  });
});

describe('failover watch: a soul arrives, the keeper it came from is dead', () => {
  it('resets the sticky queue and fails each of the dead keeper’s dispatches once, KeeperLost naming both keepers', async () => {
    const r = rig(
      { A: [1200, 400, -2] },
      { A: { dG9rMQ: entry('run-1'), dG9rMg: entry('run-2') }, B: { b: entry('x') } },
    );
    r.connect('s1');
    r.connect('s2');
    await r.c.whenIdle();
    assert.deepEqual(r.failed.map((f) => f.token).sort(), ['dG9rMQ==', 'dG9rMg=='].sort());
    for (const f of r.failed) {
      assert.equal(f.err.type, KEEPER_LOST);
      assert.equal(f.err.nonRetryable, true, 'a retry would wait on the dead keeper’s queue');
      assert.match(f.err.message, /keeper A was lost .*keeper B/);
    }
    assert.deepEqual(r.reset.sort(), ['run-1', 'run-2'], 'the runs’ next workflow task may go to any keeper');
    r.connect('s3');
    await r.c.whenIdle();
    assert.equal(r.failed.length, 2, 'nothing is failed twice');
  });

  it('for a shard’s dispatch (a run over 500 hosts) resets the shard’s sticky queue and the run’s', async () => {
    const r = rig({ A: [-2] }, { A: { dG9rMQ: entry('run-9', 'run-9-b1-s2') } });
    r.connect('s1');
    await r.c.whenIdle();
    assert.equal(r.failed.length, 1);
    // The shard's end schedules a task of the run workflow, which may also be sticky to the dead keeper.
    assert.deepEqual(r.reset, ['run-9-b1-s2', 'run-9']);
  });

  it('leaves alone a dead keeper of another cluster on the same cache (its own keepers end its dispatches)', async () => {
    const r = rig({ A: [-2] }, { A: { dG9rMQ: entry('run-1') } }, 60_000, 'another-queue');
    r.connect('s1');
    await r.c.whenIdle();
    assert.deepEqual(r.failed, []);
  });

  it('does nothing while the keeper renews its claim (alive; its own dispatch hands moved hosts back)', async () => {
    const r = rig({ A: [2000, 1500, 2999] }, { A: { dG9rMQ: entry('run-1') } });
    r.connect('s1');
    await r.c.whenIdle();
    assert.deepEqual(r.failed, []);
    assert.deepEqual(r.reset, []);
  });
});

describe('failover watch: no soul arrives', () => {
  it('ends a dead keeper’s dispatch from its own timer, so KeeperLost does not wait for a soul to reconnect', async () => {
    const r = rig({ A: [1200, 400, -2] }, { A: { dG9rMQ: entry('run-1') } }, 5);
    await r.c.start();
    try {
      // No soul connects: only the slow sweep can find the dead keeper.
      while (r.failed.length === 0) await new Promise((res) => setTimeout(res, 5));
      await r.c.whenIdle();
    } finally {
      await r.c.stop();
    }
    assert.deepEqual(
      r.failed.map((f) => [f.token, f.err.type]),
      [['dG9rMQ==', KEEPER_LOST]],
    );
    assert.deepEqual(r.reset, ['run-1']);
  });

  it('leaves a live keeper’s dispatch alone however many sweeps see it', async () => {
    // Its claim keeps being renewed (the TTL goes back up between reads).
    const ttls = { A: Array.from({ length: 200 }, (_, i) => 3000 - (i % 5) * 500) };
    const r = rig(ttls, { A: { dG9rMQ: entry('run-1') } }, 2);
    await r.c.start();
    try {
      while (ttls.A.length > 1) await new Promise((res) => setTimeout(res, 5));
      await r.c.whenIdle();
    } finally {
      await r.c.stop();
    }
    assert.deepEqual(r.failed, []);
  });
});

describe('failover watch: a silent keeper whose souls have all moved', () => {
  // A's claim counts down without renewal (below 2 s left: silent for over a second) and stays there
  // for the whole watch: only the souls' move can end its dispatch here.
  const silent = { A: [2900, 1900, 1800, 1700], B: [2900] };

  it('ends the dispatch before the claim lapses once every soul of it holds a live keeper’s lease', async () => {
    const r = rig(silent, { A: { dG9rMQ: entry('run-1', 'run-1', ['s1', 's2']) } }, 60_000, 'q', { s1: 'B', s2: 'B' });
    r.connect('s1');
    await r.c.whenIdle();
    assert.equal(r.failed.length, 1);
    assert.equal(r.failed[0]!.err.type, KEEPER_LOST);
    assert.match(r.failed[0]!.err.message, /keeper A was lost .*every soul of this dispatch reconnected/);
    assert.deepEqual(r.reset, ['run-1']);
  });

  it('waits while one soul of the dispatch has no lease, or a lease of the silent keeper itself', async () => {
    for (const leases of [{ s1: 'B' }, { s1: 'B', s2: 'A' }] as Record<string, string>[]) {
      const r = rig(silent, { A: { dG9rMQ: entry('run-1', 'run-1', ['s1', 's2']) } }, 60_000, 'q', leases);
      r.connect('s1');
      await r.c.whenIdle();
      assert.deepEqual(r.failed, [], JSON.stringify(leases));
    }
  });

  it('does not end a renewing keeper’s dispatch, wherever its souls are', async () => {
    const r = rig(
      { A: [2900, 2500, 2990], B: [2900] },
      { A: { dG9rMQ: entry('run-1', 'run-1', ['s1']) } },
      60_000,
      'q',
      { s1: 'B' },
    );
    r.connect('s1');
    await r.c.whenIdle();
    assert.deepEqual(r.failed, []);
  });
});
