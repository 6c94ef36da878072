// The front door of one-off executions (issue 34, docs/executions.md): checks the module and its
// parameters against the core library's contract, selects the hosts (runs/soul-query.ts, the same
// selection a fact query previews), records the execution (the audit record: who, what, where) and
// starts its workflow. Typed outcomes; the API maps them to problems.
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { claimExecutionWorkflow, createExecution, finishExecution, runningExecutions } from '../db/repos/executions';
import { MODULES, checkModuleParams } from '../scenario/modules';
import type { TemporalClientHolder } from './connection';
import { closeOrphanedExecutions, executionWorkflowId } from './execution-orphans';
import { paramSecretOutside, paramSecretProblem } from './execution-secrets';
import { sharedQueue } from './queues';
import { selectSouls } from './soul-query';
import { oneOffExecution } from './workflows/execution';

export interface ExecutionRequest {
  module: string;
  params: Record<string, unknown>;
  target: { covens?: string[]; sids?: string[]; where?: string };
  batch?: number;
  timeout?: number;
  dry_run?: boolean;
  confirm?: boolean;
  output_cap?: number;
}

export interface ExecutionPolicy {
  /** Modules this caller may run (`*` for any of the core library). */
  modules: readonly string[];
  /** Above this many selected hosts the request needs `confirm: true`. */
  confirmAbove: number;
  /** Executions one operator may have running at once. */
  perOperator: number;
  /** secretstore.scenario_prefix: references in the params must lie under it (runs/execution-secrets.ts). */
  scenarioPrefix: string;
  /** The role's name and executions.secret_prefixes for it: the store paths its references may name (none: no reference). */
  role: string;
  secretPrefixes: readonly string[];
}

/** The module a role must be allowed to run before any module parameter may name a program for it. */
export const PROGRAM_MODULE = 'core.cmd.run';

export type ExecutionRefusal =
  | { kind: 'invalid'; path: string; message: string }
  | { kind: 'forbidden-module'; message: string }
  | { kind: 'forbidden-param'; path: string; message: string }
  | { kind: 'confirm'; message: string; selected: number }
  | { kind: 'busy'; message: string };

export class ExecutionRefused extends Error {
  constructor(readonly refusal: ExecutionRefusal) {
    super(refusal.message);
    this.name = 'ExecutionRefused';
  }
}

export const DEFAULT_TIMEOUT_S = 60;
export const DEFAULT_OUTPUT_CAP = 64 * 1024;

export const newExecutionId = () => `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;

/** Refuses (ExecutionRefused) or records and starts; answers the id and the selected hosts. */
export async function startExecution(
  db: Knex,
  temporal: TemporalClientHolder,
  aid: string,
  req: ExecutionRequest,
  policy: ExecutionPolicy,
): Promise<{ id: string; sids: string[] }> {
  const refuse = (r: ExecutionRefusal): never => {
    throw new ExecutionRefused(r);
  };
  if (!MODULES.has(req.module))
    refuse({
      kind: 'invalid',
      path: '/body/module',
      message: `unknown module "${req.module}": one of the core library (${[...MODULES.keys()].join(', ')})`,
    });
  if (!policy.modules.includes('*') && !policy.modules.includes(req.module)) {
    refuse({
      kind: 'forbidden-module',
      message: `your role may not run module ${req.module} (allowed: ${policy.modules.join(', ') || 'none'})`,
    });
  }
  const problems = checkModuleParams(req.module, req.params) ?? [];
  if (problems.length > 0)
    refuse({ kind: 'invalid', path: `/body/params${problems[0]!.pointer}`, message: problems[0]!.message });
  // A module allowed by name may still run any program through a parameter (core.file.present's
  // `validate` runs its argv as root): such a parameter needs the right to run commands at all.
  const mayRunPrograms = policy.modules.includes('*') || policy.modules.includes(PROGRAM_MODULE);
  const program = (MODULES.get(req.module)!.programParams ?? []).find((p) => req.params[p] !== undefined);
  if (program !== undefined && !mayRunPrograms)
    refuse({
      kind: 'forbidden-param',
      path: `/body/params/${program}`,
      message: `params.${program} runs a program on the host (as root): your role may run no program; that needs ${PROGRAM_MODULE} in the role's execution modules (executions.modules)`,
    });
  const secret = paramSecretProblem(req.params, policy.scenarioPrefix);
  if (secret) refuse({ kind: 'invalid', path: `/body/params${secret.pointer}`, message: secret.message });
  const bound = paramSecretOutside(req.params, policy.secretPrefixes);
  if (bound)
    refuse({
      kind: 'forbidden-param',
      path: `/body/params${bound.pointer}`,
      message:
        policy.secretPrefixes.length === 0
          ? `${bound.path}: your role may reference no secret in an execution (executions.secret_prefixes.${policy.role} is not configured)`
          : `${bound.path} is outside the secrets your role may reference in an execution (executions.secret_prefixes.${policy.role}: ${policy.secretPrefixes.join(', ')})`,
    });
  const t = req.target;
  if (!t.covens?.length && !t.sids?.length && t.where === undefined)
    refuse({ kind: 'invalid', path: '/body/target', message: 'name at least one of covens, sids or where' });
  const souls = await selectSouls(db, t);
  if (souls.length === 0) refuse({ kind: 'invalid', path: '/body/target', message: 'selects no host' });
  if (souls.length > policy.confirmAbove && req.confirm !== true) {
    refuse({
      kind: 'confirm',
      selected: souls.length,
      message: `the target selects ${souls.length} hosts, more than ${policy.confirmAbove}: send again with confirm: true`,
    });
  }
  if (!temporal.client) throw new Error('the Temporal client is not connected');
  const client = temporal.client;
  const atLimit = async () => (await runningExecutions(db, aid)) >= policy.perOperator;
  // At the limit, first close the executions whose workflow is gone: they will never answer.
  if ((await atLimit()) && ((await closeOrphanedExecutions(db, client, aid)).length === 0 || (await atLimit())))
    refuse({
      kind: 'busy',
      message: `you have ${policy.perOperator} executions running, the most one operator may have at once`,
    });
  const id = newExecutionId();
  const sids = souls.map((s) => s.sid);
  const timeoutMs = (req.timeout ?? DEFAULT_TIMEOUT_S) * 1000;
  await createExecution(db, {
    id,
    aid,
    module: req.module,
    params: req.params,
    target: t,
    sids,
    dry_run: req.dry_run === true,
    timeout_ms: timeoutMs,
    output_cap: req.output_cap ?? DEFAULT_OUTPUT_CAP,
    batch: req.batch ?? sids.length,
  });
  try {
    const handle = await client.workflow.start(oneOffExecution, {
      workflowId: executionWorkflowId(id),
      taskQueue: sharedQueue(temporal.taskQueue),
      args: [{ executionId: id, sids, batch: req.batch ?? sids.length, timeoutMs }],
    });
    // The fence's record of which workflow run is the execution's own (runs/activities/execution-fence.ts).
    await claimExecutionWorkflow(db, id, handle.firstExecutionRunId);
  } catch (err) {
    await finishExecution(db, id, `not started: ${(err as Error).message}`);
    throw err;
  }
  return { id, sids };
}
