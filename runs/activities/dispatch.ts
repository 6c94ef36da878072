// The dispatch activity: runs only on a keeper's own queue (`<task_queue>-<kid>`), because only that
// keeper holds the souls' streams. Applies each host's plan (bounded concurrency), writes the
// per-step report as it goes, and heartbeats so a killed keeper is noticed within the heartbeat
// timeout; the retry re-sends the same step keys and the souls' ledgers answer them.
// The parts: the pool and its heartbeat-paced writes (dispatch-pool.ts), the per-host transport,
// stream or push over SSH (dispatch-transport.ts), and the plan-drift re-check before a plan is
// applied (dispatch-plan-check.ts, docs/plans.md).
// While it runs, the activity is listed in the cache under this keeper's kid (inflight.ts): when this
// keeper dies, the keeper its souls move to fails the activity at once (runs/failover.ts) instead of
// the run waiting for the heartbeat timeout.
// Diffs and output (docs/secrets.md "Diffs and hashes", "Output"): every answer goes through the
// host's secret boundary (host-boundary.ts, the same for executions), so what is stored and shown has
// keyed digests only, no content for a step whose file holds or will hold a secret, no value of a
// secret the host was ever sent, and no output of a step that may read a file holding one.
import { setMaxListeners } from 'node:events';
import { Context } from '@temporalio/activity';
import { incarnationOf, planStepRows } from '../../db/repos/plans';
import { getRun, loadPlans, recordHosts, recordSteps } from '../../db/repos/runs';
import { owedOnchanges } from '../../db/repos/runs-carryover';
import type { PlanStep } from '../../scenario/render/plan';
import { getSouls } from '../../db/repos/souls';
import type { DispatchInput, DispatchOutcome } from '../messages';
import { applyHost } from './apply-host';
import type { DispatchActivityDeps } from './deps';
import { DispatchReport, runPool } from './dispatch-pool';
import { refuseOnPlanDrift } from './dispatch-plan-check';
import { hostTransports } from './dispatch-transport';
import { RunGone } from './errors';
import { fenceRun } from './fence';
import { holdsSecret, resolvePlanSecrets } from './secrets';
import { contentDigestKey, stepPath } from './step-diff';
import { boundarySender, hostBoundaries } from './host-boundary';
import { staleFacts, staleText } from '../../db/repos/plan-facts';

const CONCURRENCY = 128;
const HEARTBEAT_MS = 2000;

export function createDispatchActivities(deps: DispatchActivityDeps) {
  const stepTimeoutMs = deps.stepTimeoutMs ?? 300_000;
  const digestKey = contentDigestKey(deps.secrets?.nonceKey);

  const direct = {
    async dispatchHosts({ applyId, sids, batch }: DispatchInput): Promise<DispatchOutcome> {
      const ctx = Context.current();
      const signal = ctx.cancellationSignal;
      // Every host in flight (up to the batch size) listens on this one signal for cancellation.
      setMaxListeners(0, signal);
      await fenceRun(deps.db, applyId, { plan: 'allow' });
      const run = await getRun(deps.db, applyId);
      const inc = run && (await incarnationOf(deps.db, run));
      if (!run || !inc) throw RunGone(applyId);
      const plans = await loadPlans(deps.db, applyId, sids);
      const transports = await hostTransports(deps, sids);
      // Values are read now, for this dispatch only, and never written back (issue 12).
      // Markers are bound to the apply_id that rendered them: a plan's, for a run that applies one.
      const secrets = await resolvePlanSecrets(deps.secrets, run.plan_id ?? applyId, plans);
      // Per host and step: the path it manages and whether it carries a secret (kept on its row), and
      // which steps are secret steps (their file held or will hold a secret: no content shown).
      const facts = new Map<string, Map<number, { path: string | null; secret: boolean }>>();
      for (const [sid, plan] of plans)
        facts.set(
          sid,
          new Map(plan.steps.map((st) => [st.index, { path: stepPath(st.params), secret: holdsSecret(st.params) }])),
        );
      // The secrets sent now are recorded before anything is sent; every host's output is then
      // scrubbed of all the values it holds, from this dispatch or any before it.
      const boundaries = await hostBoundaries(
        deps.db,
        deps.secrets,
        sids,
        new Map([...secrets].filter(([, hs]) => !hs.error).map(([sid, hs]) => [sid, hs.values])),
      );
      const check = run.kind === 'plan' ? { showContent: (step: PlanStep) => !holdsSecret(step.params) } : undefined;
      const planned = run.plan_id ? await planStepRows(deps.db, run.plan_id, sids) : undefined;
      const factsNow = run.plan_id ? await getSouls(deps.db, sids) : undefined;
      // Every host of the plan, not only this batch's, before any is sent anything (docs/plans.md).
      const stale = run.plan_id ? await staleFacts(deps.db, applyId) : [];
      // A retry of a locked run inherits the `onchanges:` work the locked run owed (its triggers
      // changed there, so they will not change again here).
      const owed =
        run.retry_of === null ? new Map<string, Set<string>>() : await owedOnchanges(deps.db, run.retry_of, sids);
      const out: DispatchOutcome = { ok: 0, changed: 0, failed: [], unknown: [], moved: [] };
      const report = new DispatchReport(
        async (hosts, steps) => {
          await recordSteps(
            deps.db,
            steps.map((r) => ({ ...r, path: null, secret: false, ...facts.get(r.sid)?.get(r.step_index) })),
          );
          await recordHosts(deps.db, hosts, applyId);
        },
        (progress) => ctx.heartbeat(progress),
        sids.length,
      );
      // Finished hosts are also written with each heartbeat (dispatch-pool.ts).
      const beat = setInterval(() => report.tick(), HEARTBEAT_MS);
      try {
        await runPool(sids, CONCURRENCY, signal, async (sid) => {
          const plan = plans.get(sid);
          if (!plan) {
            out.unknown.push(sid);
            report.add(
              {
                sid,
                status: 'unknown',
                kid: deps.kid,
                reason: 'no rendered plan for this host',
                batch,
                started_at: null,
                finished_at: null,
              },
              [],
              false,
            );
            return;
          }
          if ((await transports.arrive(sid, signal)) === 'moved') {
            out.moved.push(sid);
            return;
          }
          const hs = secrets.get(sid);
          if (hs?.error) {
            // Nothing is sent to a host whose secrets cannot be read: it fails whole, with the reason.
            const now = new Date();
            report.add(
              { sid, status: 'failed', kid: deps.kid, reason: hs.error, batch, started_at: now, finished_at: now },
              plan.steps.map((s) => ({
                apply_id: applyId,
                sid,
                step_index: s.index,
                name: s.name,
                module: s.module,
                status: 'skipped' as const,
                skip_reason: 'secret_unavailable' as const,
                changed: false,
                output: `not sent: ${hs.error}`,
                attempts: 0,
                replayed: false,
                started_at: null,
                finished_at: null,
              })),
            );
            out.failed.push(sid);
            return;
          }
          const channel = await transports.open(sid, signal);
          if ('unreachable' in channel) {
            const now = new Date();
            report.add({
              sid,
              status: 'unknown',
              kid: deps.kid,
              reason: channel.unreachable,
              batch,
              started_at: now,
              finished_at: now,
            });
            out.unknown.push(sid);
            return;
          }
          const transport = channel.sender;
          const guarded = boundarySender(
            transport,
            digestKey,
            boundaries.get(sid) ?? { tainted: new Set(), values: [] },
            plan.steps,
          );
          const host = {
            sid,
            steps: hs?.steps ?? plan.steps,
            sender: guarded,
            owed: new Set(plan.steps.filter((st) => st.onchanges && owed.get(sid)?.has(st.name)).map((st) => st.index)),
            evaluate: deps.scenario.evaluate,
            stepTimeoutMs,
            signal,
            // Exactly what render saw: the input with its defaults, the state, the soulprint.
            context: {
              input: plan.host_input ?? run.rendered_input ?? run.input,
              state: run.plan_upgrade?.state_after ?? inc.state,
              soulprint: { self: plan.soulprint ?? {} },
            },
          };
          const r = await (async () => {
            if (planned && run.plan_id) {
              const planId = run.plan_id;
              const refused = await refuseOnPlanDrift({
                applyId,
                planId,
                sid,
                plan,
                planned: planned.get(sid) ?? [],
                soul: factsNow?.get(sid),
                checkAgain: () =>
                  applyHost({ ...host, applyId: planId, check: { showContent: (step) => !holdsSecret(step.params) } }),
                ...(stale.length > 0 ? { staleHosts: `facts its render read have changed: ${staleText(stale)}` } : {}),
              });
              if (refused) return refused;
            }
            return applyHost({ ...host, applyId, ...(check ? { check } : {}) });
          })().finally(() => channel.close());
          report.add(
            {
              sid,
              status: r.status,
              kid: deps.kid,
              reason: r.reason,
              batch,
              started_at: r.startedAt,
              finished_at: r.finishedAt,
            },
            r.steps,
          );
          if (r.status === 'ok') out.ok++;
          else if (r.status === 'changed') {
            out.ok++;
            out.changed++;
          } else if (r.status === 'failed') out.failed.push(sid);
          else out.unknown.push(sid);
          if (report.full) await report.write();
        });
        await report.close();
      } finally {
        clearInterval(beat);
      }
      // Cancelled: the workflow stopped waiting; the hosts not reached were never sent anything.
      return out;
    },
  };

  return {
    async dispatchHosts(input: DispatchInput): Promise<DispatchOutcome> {
      const inflight = deps.inflight;
      if (!inflight) return direct.dispatchHosts(input);
      const { taskToken: token, workflowExecution } = Context.current().info;
      // The cache being away only costs the fast failover: the heartbeat timeout still covers a dead keeper.
      const warn = (err: Error) => deps.log.warn('cannot record the in-flight dispatch', { error: err.message });
      const info = {
        applyId: input.applyId,
        hosts: input.sids.length,
        sids: input.sids,
        workflowId: workflowExecution?.workflowId ?? '',
        runId: workflowExecution?.runId ?? '',
      };
      await inflight.begin(deps.kid, token, info).catch(warn);
      const touch = setInterval(() => void inflight.touch(deps.kid).catch(() => undefined), HEARTBEAT_MS);
      try {
        return await direct.dispatchHosts(input);
      } finally {
        clearInterval(touch);
        await inflight.end(deps.kid, token).catch(warn);
      }
    },
  };
}

export type DispatchActivities = ReturnType<typeof createDispatchActivities>;
