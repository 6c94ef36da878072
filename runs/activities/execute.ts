// One-off executions (issue 34, docs/executions.md): the activities of the execution workflow.
// `executeHosts` runs on a keeper's own queue, like the run dispatch, because only that keeper holds
// the souls' streams; SSH (push) souls are opened through the same PushTransport. It sends the one
// module as step 0 of the ledger key `exec-<id>` (the execution id): a retried activity re-sends the
// same key and the soul answers with its recorded result, so an idempotent module never runs twice
// for one execution. Check mode sends it as a dry run (nothing changes, `changed` = would change).
// No incarnation state is read or written and no lock is taken. A host that does not answer within
// the per-host timeout, or whose stream is gone, is `unknown`: silence is never success.
// Secrets (issue 45, H-1): an execution crosses the same boundary as a run (host-boundary.ts): the
// diff guard and the path taint (an execution writing a secret taints its path; one over a tainted
// path shows no content, size or plain hash), the scrub of every value the host holds, and the
// withholding of output from a step that may read a file holding a secret.
import { locateWaiting } from './locate-wait';
import { setMaxListeners } from 'node:events';
import { Context } from '@temporalio/activity';
import { fenceExecution } from './execution-fence';
import {
  finishExecution,
  recordExecutionHosts,
  type ExecutionHostRow,
  type ExecutionSummary,
} from '../../db/repos/executions';
import type { DispatchActivityDeps, SharedActivityDeps, StepSender } from './deps';
import type { RouteGroup } from '../messages';
import { dispatchQueue } from '../queues';
import { cleanStepOutput } from './step-output';
import { paramSecretRefs, resolveParamSecrets, withholdValidatorOutput } from '../execution-secrets';
import { markExecutionWrite } from '../../db/repos/executions';
import { EXECUTION_FIX, boundarySender, hostBoundaries } from './host-boundary';
import { contentDigestKey, stepPath } from './step-diff';

const CONCURRENCY = 128;
const HEARTBEAT_MS = 2000;

export interface ExecuteInput {
  executionId: string;
  sids: string[];
}

/** The ledger key of an execution: its own namespace, never an incarnation's apply_id. */
export const executionKey = (executionId: string) => `exec-${executionId}`;

export function createExecutionDispatchActivities(deps: DispatchActivityDeps) {
  const graceMs = deps.reconnectGraceMs ?? 10_000;
  const digestKey = contentDigestKey(deps.secrets?.nonceKey);
  return {
    /** Answers the hosts it could not reach from here (another keeper holds them): the workflow routes them again. */
    async executeHosts({ executionId, sids }: ExecuteInput): Promise<{ moved: string[] }> {
      const ctx = Context.current();
      const signal = ctx.cancellationSignal;
      setMaxListeners(0, signal);
      // Before anything else, whoever started the workflow (runs/activities/execution-fence.ts).
      const e = await fenceExecution(deps.db, executionId, sids);
      // `secretstore:` references in the params are read now, just before sending (runs/execution-secrets.ts):
      // the values exist only in this activity's memory, as SecretValues, and are scrubbed from answers.
      const resolved = await resolveParamSecrets(deps.secrets?.reader, deps.secrets?.scenarioPrefix, e.params);
      if ('error' in resolved) {
        const now = new Date();
        await recordExecutionHosts(
          deps.db,
          executionId,
          sids.map((sid) => ({
            sid,
            status: 'failed',
            changed: false,
            output: cleanStepOutput(resolved.error),
            diff: null,
            started_at: null,
            finished_at: now,
          })),
        );
        return { moved: [] };
      }
      // What the execution writes, kept on it before anything is sent: with its host rows it taints
      // (or, without a secret, clears) the path as a run step does (db/repos/step-secrets.ts).
      await markExecutionWrite(deps.db, executionId, stepPath(e.params), paramSecretRefs(e.params).length > 0);
      const boundaries = await hostBoundaries(
        deps.db,
        deps.secrets,
        sids,
        new Map(sids.map((sid) => [sid, resolved.values])),
      );
      const pushed = deps.push ? await deps.push.owns(sids) : new Set<string>();
      const moved: string[] = [];
      let rows: ExecutionHostRow[] = [];
      const flush = async () => {
        const r = rows;
        rows = [];
        await recordExecutionHosts(deps.db, executionId, r);
      };
      let writing: Promise<void> = Promise.resolve();
      const beat = setInterval(() => {
        ctx.heartbeat();
        if (rows.length > 0) writing = writing.then(flush);
      }, HEARTBEAT_MS);
      const here = async (sid: string) => {
        const deadline = Date.now() + graceMs;
        for (;;) {
          if (deps.sessions.isConnected(sid)) return true;
          const [kid] = await deps.locate([sid]);
          if ((kid && kid !== deps.kid) || Date.now() >= deadline || signal.aborted) return false;
          await new Promise((r) => setTimeout(r, 200));
        }
      };
      try {
        let next = 0;
        const worker = async () => {
          while (next < sids.length && !signal.aborted) {
            const sid = sids[next++]!;
            let channel: (StepSender & { close(): Promise<void> }) | undefined;
            if (pushed.has(sid)) {
              try {
                channel = await deps.push!.open(sid, signal);
              } catch (err) {
                rows.push({
                  sid,
                  status: 'unknown',
                  changed: false,
                  output: cleanStepOutput(`${(err as Error).message}; nothing was run on this host`),
                  diff: null,
                  started_at: null,
                  finished_at: new Date(),
                });
                continue;
              }
            } else if (!(await here(sid))) {
              moved.push(sid);
              continue;
            }
            const started = new Date();
            try {
              const sender = boundarySender(
                channel ?? deps.sessions,
                digestKey,
                boundaries.get(sid) ?? { tainted: new Set(), values: resolved.values },
                [{ index: 0, params: resolved.params }],
                EXECUTION_FIX,
              );
              const a = await sender.sendStep(
                sid,
                {
                  applyId: executionKey(executionId),
                  stepIndex: 0,
                  module: e.module,
                  params: resolved.params,
                  // A file's content is shown in check mode only when the step holds no secret.
                  ...(e.dry_run ? { dryRun: true, showContent: resolved.values.length === 0 } : {}),
                },
                { timeoutMs: e.timeout_ms, signal },
              );
              const output =
                !a.ok && resolved.values.length > 0 && e.params.validate !== undefined
                  ? withholdValidatorOutput(a.output)
                  : a.output;
              rows.push({
                sid,
                status: !a.ok ? 'failed' : a.changed ? 'changed' : 'ok',
                changed: a.changed,
                output: cleanStepOutput(output, e.output_cap),
                diff: a.diff ?? null,
                started_at: a.startedAt,
                finished_at: a.finishedAt,
              });
            } catch (err) {
              // No answer in time, or the stream was lost mid-step: whether it ran is not known.
              rows.push({
                sid,
                status: 'unknown',
                changed: false,
                output: cleanStepOutput((err as Error).message),
                diff: null,
                started_at: started,
                finished_at: new Date(),
              });
            } finally {
              await channel?.close();
            }
          }
        };
        await Promise.all(Array.from({ length: Math.min(CONCURRENCY, sids.length) }, worker));
        await writing;
        await flush();
      } finally {
        clearInterval(beat);
      }
      return { moved };
    },
  };
}

export function createExecutionSharedActivities(deps: SharedActivityDeps) {
  return {
    /** Groups hosts by the keeper holding their stream (SSH souls: this keeper); `unknown` for none after `waitMs`. */
    async routeExecution({
      executionId,
      sids,
      waitMs = 0,
    }: {
      /** Absent only in a history scheduled before the fence: routing reads locations and touches no host. */
      executionId?: string;
      sids: string[];
      waitMs?: number;
    }): Promise<{ groups: RouteGroup[]; unknown: string[] }> {
      if (executionId !== undefined) await fenceExecution(deps.db, executionId, sids);
      const kids = await locateWaiting(deps.locate, sids, waitMs);
      const groups = new Map<string, RouteGroup>();
      const unknown: string[] = [];
      sids.forEach((sid, i) => {
        const kid = kids[i];
        if (!kid) {
          unknown.push(sid);
          return;
        }
        let g = groups.get(kid);
        if (!g) groups.set(kid, (g = { kid, queue: dispatchQueue(deps.taskQueue, kid), sids: [] }));
        g.sids.push(sid);
      });
      return { groups: [...groups.values()], unknown };
    },
    async markExecutionUnknown({
      executionId,
      sids,
      reason,
    }: {
      executionId: string;
      sids: string[];
      reason: string;
    }): Promise<void> {
      await fenceExecution(deps.db, executionId, sids);
      const now = new Date();
      await recordExecutionHosts(
        deps.db,
        executionId,
        sids.map((sid) => ({
          sid,
          status: 'unknown',
          changed: false,
          output: reason,
          diff: null,
          started_at: null,
          finished_at: now,
        })),
      );
    },
    async finishExecution({ executionId }: { executionId: string }): Promise<ExecutionSummary> {
      // Its own workflow may close it again (a retry after the summary was written); no one else.
      await fenceExecution(deps.db, executionId, [], { finished: 'allow' });
      return finishExecution(deps.db, executionId, 'no answer from this host');
    },
  };
}

export type ExecutionDispatchActivities = ReturnType<typeof createExecutionDispatchActivities>;
export type ExecutionSharedActivities = ReturnType<typeof createExecutionSharedActivities>;
