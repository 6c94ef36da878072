// The dispatch activity: runs only on a keeper's own queue (`<task_queue>-<kid>`), because only that
// keeper holds the souls' streams. Applies each host's plan (bounded concurrency), writes the
// per-step report as it goes, and heartbeats so a killed keeper is noticed within the heartbeat
// timeout; the retry re-sends the same step keys and the souls' ledgers answer them.
// This is the transport seam: a host registered with transport ssh is opened through `deps.push`
// (hub/ssh) instead of waiting for its stream, and its steps then go through the same applyHost;
// workflows, render and the run report never learn which transport a host uses.
// Plans (docs/plans.md): a plan's dispatch sends every step in check mode; a run that applies a plan
// first checks each host again and refuses it, sending nothing for real, when what the plan saw
// there no longer holds (runs/activities/plan-drift.ts).
// Diffs (docs/secrets.md "Diffs and hashes"): every answer goes through diffGuard, so what is stored
// and shown has keyed digests only, and no content for a step whose file holds or will hold a secret.
import { setMaxListeners } from 'node:events';
import { Context } from '@temporalio/activity';
import { incarnationOf, planStepRows } from '../../db/repos/plans';
import { getRun, loadPlans, owedOnchanges, recordHosts, recordSteps, type HostRow, type StepRow } from '../../db/repos/runs';
import type { PlanStep } from '../../scenario/render/plan';
import { getSouls } from '../../db/repos/souls';
import type { DispatchInput, DispatchOutcome } from '../messages';
import { applyHost } from './apply-host';
import type { DispatchActivityDeps } from './deps';
import { RunGone } from './errors';
import { fenceRun } from './fence';
import { factsDrift, stepDrift } from './plan-drift';
import { holdsSecret, resolvePlanSecrets, secretSender } from './secrets';
import { contentDigestKey, diffGuard, secretSteps, stepPath } from './step-diff';
import { taintedPaths } from '../../db/repos/step-secrets';

const CONCURRENCY = 128;
const HEARTBEAT_MS = 2000;

export function createDispatchActivities(deps: DispatchActivityDeps) {
  const stepTimeoutMs = deps.stepTimeoutMs ?? 300_000;
  const graceMs = deps.reconnectGraceMs ?? 10_000;
  const digestKey = contentDigestKey(deps.secrets?.nonceKey);

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
      await fenceRun(deps.db, applyId, { plan: 'allow' });
      const run = await getRun(deps.db, applyId);
      const inc = run && await incarnationOf(deps.db, run);
      if (!run || !inc) throw RunGone(applyId);
      const plans = await loadPlans(deps.db, applyId, sids);
      // Hosts reached by push (SSH) have no stream to wait for: each is opened once, below.
      const pushed = deps.push ? await deps.push.owns(sids) : new Set<string>();
      // Values are read now, for this dispatch only, and never written back (issue 12).
      // Markers are bound to the apply_id that rendered them: a plan's, for a run that applies one.
      const secrets = await resolvePlanSecrets(deps.secrets, run.plan_id ?? applyId, plans);
      // Per host and step: the path it manages and whether it carries a secret (kept on its row), and
      // which steps are secret steps (their file held or will hold a secret: no content shown).
      const facts = new Map<string, Map<number, { path: string | null; secret: boolean }>>();
      for (const [sid, plan] of plans) facts.set(sid, new Map(plan.steps.map((st) => [st.index, { path: stepPath(st.params), secret: holdsSecret(st.params) }])));
      const tainted = await taintedPaths(deps.db, sids, [...new Set([...facts.values()].flatMap((m) => [...m.values()].map((f) => f.path)).filter((p): p is string => p !== null))]);
      const check = run.kind === 'plan' ? { showContent: (step: PlanStep) => !holdsSecret(step.params) } : undefined;
      const planned = run.plan_id ? await planStepRows(deps.db, run.plan_id, sids) : undefined;
      const factsNow = run.plan_id ? await getSouls(deps.db, sids) : undefined;
      // A retry of a locked run inherits the `onchanges:` work the locked run owed (its triggers
      // changed there, so they will not change again here).
      const owed = run.retry_of === null ? new Map<string, Set<string>>() : await owedOnchanges(deps.db, run.retry_of, sids);
      const out: DispatchOutcome = { ok: 0, changed: 0, failed: [], unknown: [], moved: [] };
      let hostRows: Omit<HostRow, 'apply_id'>[] = [];
      let stepRows: StepRow[] = [];
      let done = 0;
      const flush = async () => {
        const [h, s] = [hostRows, stepRows];
        hostRows = []; stepRows = [];
        await recordSteps(deps.db, s.map((r) => ({ ...r, path: null, secret: false, ...facts.get(r.sid)?.get(r.step_index) })));
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
            if (!pushed.has(sid) && await awaitSession(sid, signal) === 'moved') { out.moved.push(sid); continue; }
            const hs = secrets.get(sid);
            if (hs?.error) {
              // Nothing is sent to a host whose secrets cannot be read: it fails whole, with the reason.
              const now = new Date();
              stepRows.push(...plan.steps.map((s) => ({ apply_id: applyId, sid, step_index: s.index, name: s.name, module: s.module, status: 'skipped' as const, skip_reason: 'secret_unavailable' as const,
                changed: false, output: `not sent: ${hs.error}`, attempts: 0, replayed: false, started_at: null, finished_at: null })));
              hostRows.push({ sid, status: 'failed', kid: deps.kid, reason: hs.error, batch, started_at: now, finished_at: now });
              out.failed.push(sid);
              done++;
              continue;
            }
            let channel: Awaited<ReturnType<NonNullable<typeof deps.push>['open']>> | undefined;
            if (pushed.has(sid)) {
              try {
                channel = await deps.push!.open(sid, signal);
              } catch (err) {
                // Not reached (no connection, host key changed, wrong host, no soul there): nothing ran.
                const now = new Date();
                hostRows.push({ sid, status: 'unknown', kid: deps.kid, reason: `${(err as Error).message}; nothing was run on this host`, batch, started_at: now, finished_at: now });
                out.unknown.push(sid);
                done++;
                continue;
              }
            }
            const transport = channel ?? deps.sessions;
            const guarded = diffGuard(hs ? secretSender(transport, hs.values) : transport, digestKey, secretSteps(plan.steps, tainted.get(sid) ?? new Set()));
            const host = {
              sid, steps: hs?.steps ?? plan.steps, sender: guarded,
              owed: new Set(plan.steps.filter((st) => st.onchanges && owed.get(sid)?.has(st.name)).map((st) => st.index)), evaluate: deps.scenario.evaluate, stepTimeoutMs, signal,
              // Exactly what render saw: the input with its defaults, the state, the soulprint.
              context: { input: run.rendered_input ?? run.input, state: run.plan_upgrade?.state_after ?? inc.state, soulprint: { self: plan.soulprint ?? {} } },
            };
            const r = await (async () => {
              if (planned && run.plan_id) {
                // The plan's own key: a dry run neither reads nor writes the soul's ledger.
                const again = await applyHost({ ...host, applyId: run.plan_id, check: { showContent: (step) => !holdsSecret(step.params) } });
                const soul = factsNow?.get(sid);
                const drift = [
                  ...factsDrift(plan.soulprint, soul ? { ...(soul.soulprint ?? {}), covens: soul.covens } : null),
                  ...stepDrift(planned.get(sid) ?? [], again.steps),
                ];
                if (drift.length > 0) {
                  const now = new Date();
                  return {
                    status: 'failed' as const, startedAt: now, finishedAt: now,
                    reason: `drift since plan ${run.plan_id}: ${drift.join('; ')}; nothing was applied on this host`,
                    steps: plan.steps.map((st) => ({ apply_id: applyId, sid, step_index: st.index, name: st.name, module: st.module, status: 'skipped' as const,
                      skip_reason: 'drift' as const, changed: false, output: 'not run: the host no longer matches the plan', attempts: 0, replayed: false, started_at: null, finished_at: null })),
                  };
                }
              }
              return applyHost({ ...host, applyId, ...(check ? { check } : {}) });
            })().finally(() => channel?.close());
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
