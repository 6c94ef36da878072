// The dispatch activity: runs only on a keeper's own queue (`<task_queue>-<kid>`), because only that
// keeper holds the souls' streams. Applies each host's plan (bounded concurrency), writes the
// per-step report as it goes, and heartbeats so a killed keeper is noticed within the heartbeat
// timeout; the retry re-sends the same step keys and the souls' ledgers answer them.
import { setMaxListeners } from 'node:events';
import { Context } from '@temporalio/activity';
import { getIncarnation } from '../db/repos/incarnations';
import { checkRunHoldsLock } from '../db/repos/run-lock';
import { getRun, loadPlans, recordHosts, recordSteps, type HostRow, type StepRow } from '../db/repos/runs';
import type { DispatchInput, DispatchOutcome } from '../workflows/types';
import { applyHost } from './apply-host';
import type { DispatchActivityDeps } from './deps';
import { NotLockHolder, RunGone } from './errors';

const CONCURRENCY = 128;
const HEARTBEAT_MS = 2000;

export function createDispatchActivities(deps: DispatchActivityDeps) {
  const stepTimeoutMs = deps.stepTimeoutMs ?? 300_000;
  const graceMs = deps.reconnectGraceMs ?? 10_000;

  /** Waits until this keeper holds the soul's stream; 'moved' when another keeper does or none appears. */
  async function awaitSession(sid: string, signal: AbortSignal): Promise<'here' | 'moved'> {
    const deadline = Date.now() + graceMs;
    for (;;) {
      if (deps.sessions.isConnected(sid)) return 'here';
      const [kid] = await deps.locate([sid]);
      if ((kid && kid !== deps.kid) || Date.now() >= deadline || signal.aborted) return 'moved';
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  return {
    async dispatchHosts({ applyId, sids, batch }: DispatchInput): Promise<DispatchOutcome> {
      const ctx = Context.current();
      const signal = ctx.cancellationSignal;
      // Every host in flight (up to the batch size) listens on this one signal for cancellation.
      setMaxListeners(0, signal);
      const lock = await checkRunHoldsLock(deps.db, applyId);
      if (!lock.ok) throw NotLockHolder(lock.reason);
      const run = await getRun(deps.db, applyId);
      const inc = run && await getIncarnation(deps.db, run.incarnation);
      if (!run || !inc) throw RunGone(applyId);
      const plans = await loadPlans(deps.db, applyId, sids);
      const out: DispatchOutcome = { ok: 0, changed: 0, failed: [], unknown: [], moved: [] };
      let hostRows: Omit<HostRow, 'apply_id'>[] = [];
      let stepRows: StepRow[] = [];
      let done = 0;
      const flush = async () => {
        const [h, s] = [hostRows, stepRows];
        hostRows = []; stepRows = [];
        await recordSteps(deps.db, s);
        await recordHosts(deps.db, h, applyId);
      };
      // Finished hosts are also written with each heartbeat, so the run report shows a long dispatch
      // progressing instead of every host `pending` until the end. Writes are chained (never two at
      // once); a failed write fails the activity, whose retry rewrites every host.
      let writing: Promise<void> = Promise.resolve();
      let writeError: unknown;
      const write = () => (writing = writing.then(flush).catch((err: unknown) => { writeError ??= err; }));
      const beat = setInterval(() => {
        ctx.heartbeat({ done, of: sids.length });
        if (hostRows.length > 0) void write();
      }, HEARTBEAT_MS);
      try {
        let next = 0;
        const worker = async () => {
          while (next < sids.length && !signal.aborted) {
            const sid = sids[next++];
            const plan = plans.get(sid);
            if (!plan) { out.unknown.push(sid); hostRows.push({ sid, status: 'unknown', kid: deps.kid, reason: 'no rendered plan for this host', batch, started_at: null, finished_at: null }); continue; }
            if (await awaitSession(sid, signal) === 'moved') { out.moved.push(sid); continue; }
            const r = await applyHost({
              applyId, sid, steps: plan.steps, sender: deps.sessions, evaluate: deps.scenario.evaluate, stepTimeoutMs, signal,
              context: { input: run.input, state: inc.state, soulprint: { self: plan.soulprint ?? {} } },
            });
            stepRows.push(...r.steps);
            hostRows.push({ sid, status: r.status, kid: deps.kid, reason: r.reason, batch, started_at: r.startedAt, finished_at: r.finishedAt });
            if (r.status === 'ok') out.ok++;
            else if (r.status === 'changed') { out.ok++; out.changed++; }
            else if (r.status === 'failed') out.failed.push(sid);
            else out.unknown.push(sid);
            done++;
            if (stepRows.length >= 500) await write();
          }
        };
        await Promise.all(Array.from({ length: Math.min(CONCURRENCY, sids.length) }, worker));
        await write();
        if (writeError) throw writeError;
      } finally {
        clearInterval(beat);
      }
      // Cancelled: the workflow stopped waiting; the hosts not reached were never sent anything.
      return out;
    },
  };
}

export type DispatchActivities = ReturnType<typeof createDispatchActivities>;
