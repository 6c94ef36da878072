// The run workflow's decisions with its activities replaced (the SDK's test environment on the
// stack's Temporal server): what is rendered, batched, dispatched, skipped, committed or locked, in
// which order, for outcomes a real fleet rarely produces on demand (a host failing in the second
// batch, a soul moving between keepers twice, a dispatch activity that gives up). The activities'
// own behaviour is tested against the real database and souls (lifecycle, semantics, crash).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from '../../runs/bundle';
import { installTemporalRuntime } from '../../runs/runtime-logger';
import { silentLogger } from '../../common/logger';
import type { DispatchOutcome, RenderOutcome, RouteGroup, Routes, RunResult } from '../../runs/messages';
import { actingExecution } from '../../runs/activities/fence';
import { SHARD_HOSTS } from '../../runs/workflows/run';
import { stackTemporalConnectionOptions } from '../support/temporal-client';

/** What the fake activities were asked, in order. */
type Call = [string, Record<string, unknown>];

interface Fleet {
  render: RenderOutcome;
  /** Per host: the outcome its dispatch reports (default ok), or 'moved' / 'throw'; 'lost': the first
   *  dispatch of it is failed as another keeper fails a dead keeper's (KeeperLost), later ones are ok. */
  outcome?: Record<string, 'ok' | 'changed' | 'failed' | 'unknown' | 'moved' | 'throw' | 'lost'>;
  /** Hosts with no presence (resolveRoutes reports them unknown). */
  silent?: string[];
  commits?: boolean;
  /** Called by every fake activity with its name and apply_id, inside the activity. */
  probe?: (name: string, applyId: string) => Promise<void>;
}

describe('run workflow decisions (SDK test environment, activities replaced)', function () {
  this.timeout(180_000);
  let env: TestWorkflowEnvironment;
  let bundle: { code: string };

  before(async () => {
    // The runs below fail on purpose; the SDK would print each failed workflow's stack. The keeper's
    // own choice stands when a keeper of this process installed the Runtime first.
    installTemporalRuntime(silentLogger);
    // The stack's frontend, behind mutual TLS when the stack runs it so (KEEPER_TEMPORAL_MTLS=1).
    const { address, ...connectionOptions } = stackTemporalConnectionOptions();
    env = await TestWorkflowEnvironment.createFromExistingServer({ address, namespace: 'default', connectionOptions });
    bundle = await workflowBundle();
  });
  after(async () => {
    await env?.teardown();
  });

  /** Runs incarnationRun against fake activities; returns its result (or failure) and the calls. */
  async function run(fleet: Fleet): Promise<{ result?: RunResult; failure?: WorkflowFailedError; calls: Call[] }> {
    const id = randomBytes(4).toString('hex');
    const queue = `wf-test-${id}`;
    const dispatchQueue = `${queue}-k1`;
    const calls: Call[] = [];
    const moves = new Map<string, number>();
    // Awaited inside each fake activity, so a probe runs in that activity's context.
    const record = async (name: string, args: Record<string, unknown>) => {
      calls.push([name, args]);
      await fleet.probe?.(name, args.applyId as string);
    };
    const shared = {
      async renderRun(a: { applyId: string }) {
        await record('renderRun', a);
        return fleet.render;
      },
      async resolveRoutes(a: { applyId: string; sids: string[]; batch: number }): Promise<Routes> {
        await record('resolveRoutes', a);
        const unknown = a.sids.filter((s) => fleet.silent?.includes(s));
        const routed = a.sids.filter((s) => !unknown.includes(s));
        const groups: RouteGroup[] = routed.length ? [{ kid: 'k1', queue: dispatchQueue, sids: routed }] : [];
        return { groups, unknown };
      },
      async markUnknown(a: Record<string, unknown>) {
        await record('markUnknown', a);
      },
      async markSkipped(a: Record<string, unknown>) {
        await record('markSkipped', a);
      },
      async commitRun(a: Record<string, unknown>) {
        await record('commitRun', a);
        return fleet.commits ?? true;
      },
      async lockRun(a: Record<string, unknown>) {
        await record('lockRun', a);
      },
      async upgradeState() {
        throw new Error('not in these runs');
      },
    };
    const dispatch = {
      async dispatchHosts(a: { applyId: string; sids: string[]; batch: number }): Promise<DispatchOutcome> {
        await record('dispatchHosts', a);
        const out: DispatchOutcome = { ok: 0, changed: 0, failed: [], unknown: [], moved: [] };
        for (const sid of a.sids) {
          const o = fleet.outcome?.[sid] ?? 'ok';
          if (o === 'throw') throw ApplicationFailure.nonRetryable(`lost the stream to ${sid}`);
          if (o === 'lost' && !moves.has(sid)) {
            moves.set(sid, 1);
            throw ApplicationFailure.nonRetryable('keeper k1 was lost during this dispatch', 'KeeperLost');
          }
          if (o === 'lost') {
            out.ok++;
            continue;
          }
          if (o === 'ok') out.ok++;
          else if (o === 'changed') out.changed++;
          else if (o === 'moved') {
            moves.set(sid, (moves.get(sid) ?? 0) + 1);
            out.moved.push(sid);
          } else out[o].push(sid);
        }
        return out;
      },
    };
    const workers = await Promise.all([
      Worker.create({ connection: env.nativeConnection, taskQueue: queue, workflowBundle: bundle, activities: shared }),
      Worker.create({ connection: env.nativeConnection, taskQueue: dispatchQueue, activities: dispatch }),
    ]);
    const applyId = `wf-${id}.create.test`;
    const running = workers.map((w) => w.run());
    try {
      const result = (await env.client.workflow.execute('incarnationRun', {
        workflowId: applyId,
        taskQueue: queue,
        args: [{ applyId, incarnation: `wf-${id}`, operation: 'create' }],
      })) as RunResult;
      return { result, calls };
    } catch (err) {
      if (err instanceof WorkflowFailedError) return { failure: err, calls };
      throw err;
    } finally {
      for (const w of workers) w.shutdown();
      await Promise.allSettled(running);
    }
  }

  const names = (calls: Call[]) => calls.map(([n]) => n);
  const sidsOf = (calls: Call[], name: string) => calls.filter(([n]) => n === name).map(([, a]) => a.sids);
  const hosts = (n: number) => Array.from({ length: n }, (_, i) => `h${i + 1}.test`);

  it('all hosts succeed: one batch dispatched, committed once, nothing locked', async () => {
    const sids = hosts(3);
    const { result, calls } = await run({
      render: { ok: true, sids, serial: null },
      outcome: { 'h2.test': 'changed' },
    });
    assert.deepEqual(names(calls), ['renderRun', 'resolveRoutes', 'dispatchHosts', 'commitRun']);
    assert.equal(result?.status, 'succeeded');
    assert.deepEqual(result?.hosts, { ok: 2, changed: 1, failed: 0, unknown: 0, skipped: 0 });
  });

  it('a render error locks at once: no host is routed or sent anything, the workflow fails as RunFailed', async () => {
    const { failure, calls } = await run({ render: { ok: false, errorCount: 2 } });
    assert.deepEqual(names(calls), ['renderRun', 'lockRun']);
    assert.equal(calls[1]![1].phase, 'render');
    assert.match(String(calls[1]![1].reason), /render failed with 2 error\(s\); nothing was applied/);
    assert.equal((failure?.cause as ApplicationFailure | undefined)?.type, 'RunFailed');
  });

  it('serial: 2 over five hosts, a host failing in the second batch: the third batch is skipped, the run locks, nothing is committed', async () => {
    const sids = hosts(5);
    const { failure, calls } = await run({ render: { ok: true, sids, serial: 2 }, outcome: { 'h4.test': 'failed' } });
    assert.deepEqual(sidsOf(calls, 'dispatchHosts'), [
      ['h1.test', 'h2.test'],
      ['h3.test', 'h4.test'],
    ]);
    assert.deepEqual(sidsOf(calls, 'markSkipped'), [['h5.test']]);
    assert.ok(!names(calls).includes('commitRun'), 'a failed host means nothing is committed');
    const lock = calls.find(([n]) => n === 'lockRun')!;
    assert.match(String(lock[1].reason), /1 host\(s\) failed, 0 unknown; nothing was committed/);
    const details = (failure?.cause as ApplicationFailure).details?.[0] as RunResult;
    assert.deepEqual(details.hosts, { ok: 3, changed: 0, failed: 1, unknown: 0, skipped: 1 });
  });

  it('"40%" of five hosts is batches of two; a silent host (no presence) is unknown and locks the run', async () => {
    const sids = hosts(5);
    const { failure, calls } = await run({ render: { ok: true, sids, serial: '40%' }, silent: ['h1.test'] });
    assert.deepEqual(sidsOf(calls, 'resolveRoutes'), [['h1.test', 'h2.test']], 'no later batch is routed');
    assert.deepEqual(sidsOf(calls, 'dispatchHosts'), [['h2.test']], 'the silent host is never sent a step');
    assert.deepEqual(sidsOf(calls, 'markSkipped'), [['h3.test', 'h4.test', 'h5.test']]);
    assert.ok(failure, 'an unknown host is never success');
    assert.match(String(calls.find(([n]) => n === 'lockRun')![1].reason), /0 host\(s\) failed, 1 unknown/);
  });

  it('a soul that moved between keepers is re-routed once; moved twice, it is unknown with the reason', async () => {
    const { failure, calls } = await run({
      render: { ok: true, sids: hosts(2), serial: null },
      outcome: { 'h2.test': 'moved' },
    });
    assert.deepEqual(sidsOf(calls, 'resolveRoutes'), [['h1.test', 'h2.test'], ['h2.test']]);
    const unknown = calls.find(([n]) => n === 'markUnknown')!;
    assert.deepEqual(unknown[1].sids, ['h2.test']);
    assert.match(String(unknown[1].reason), /moved between keepers twice/);
    assert.ok(failure);
  });

  it('a dispatch ended as KeeperLost (its keeper died) routes all its hosts again at once and the run commits', async () => {
    const { result, calls } = await run({
      render: { ok: true, sids: hosts(2), serial: null },
      outcome: { 'h1.test': 'lost' },
    });
    assert.deepEqual(sidsOf(calls, 'resolveRoutes'), [
      ['h1.test', 'h2.test'],
      ['h1.test', 'h2.test'],
    ]);
    assert.equal(names(calls).filter((n) => n === 'dispatchHosts').length, 2, 'dispatched once more, not retried');
    assert.ok(!names(calls).includes('markUnknown'));
    assert.equal(result?.status, 'succeeded');
    assert.equal(names(calls).at(-1), 'commitRun');
  });

  it('a dispatch activity that fails for good leaves its hosts unknown, never done', async () => {
    const { failure, calls } = await run({
      render: { ok: true, sids: hosts(2), serial: null },
      outcome: { 'h1.test': 'throw' },
    });
    assert.ok(!names(calls).includes('commitRun'));
    const details = (failure?.cause as ApplicationFailure).details?.[0] as RunResult;
    assert.deepEqual(details.hosts, { ok: 0, changed: 0, failed: 0, unknown: 2, skipped: 0 });
  });

  it('a run that lost its lock before commit is failed, not reported as success', async () => {
    const { failure, calls } = await run({ render: { ok: true, sids: hosts(1), serial: null }, commits: false });
    assert.equal(names(calls).at(-1), 'commitRun');
    assert.match(failure?.cause?.message ?? '', /no longer held the incarnation lock/);
  });
  it("a batch over SHARD_HOSTS goes to shard workflows whose activities act for the run itself: the fence asks Temporal for the shard's parent", async () => {
    const seen: { name: string; own: string; acting: { workflowId: string; runId: string } }[] = [];
    const sids = hosts(SHARD_HOSTS + 1);
    const { result, calls } = await run({
      render: { ok: true, sids, serial: null },
      probe: async (name, applyId) => {
        const own = Context.current().info.workflowExecution!.workflowId;
        seen.push({ name, own, acting: await actingExecution(applyId) });
      },
    });
    assert.equal(result?.status, 'succeeded', JSON.stringify(result));
    const run0 = seen.find((s) => s.name === 'renderRun')!;
    const applyId = calls[0]![1].applyId as string;
    assert.deepEqual(run0.acting.workflowId, applyId);
    const shards = seen.filter((s) => s.own !== applyId);
    assert.deepEqual([...new Set(shards.map((s) => s.own))].sort(), [`${applyId}-b1-s1`, `${applyId}-b1-s2`]);
    assert.ok(shards.some((s) => s.name === 'resolveRoutes') && shards.some((s) => s.name === 'dispatchHosts'));
    for (const s of seen)
      assert.deepEqual(s.acting, run0.acting, `${s.name} in ${s.own} acts for the run's own execution`);
  });
});
