// Plans (docs/plans.md): a plan is a row of incarnation_runs with kind 'plan'. It renders like a
// run and sends every step in check mode; it takes no lock and changes no incarnation. A run that
// applies it adopts its render (adoptPlan) and checks, host by host, that what it saw still holds.
import type { Knex } from 'knex';
import { getIncarnation, type IncarnationRecord } from './incarnations';
import { fetchNewestFirst } from './page';
import {
  hostCounts,
  hostInputColumn,
  type NewRun,
  type PlanTarget,
  type PlanUpgrade,
  type RunRecord,
  type StepRow,
} from './runs';

/** Records a plan: a run of kind `plan` that takes no lock; the incarnation's status is untouched. */
export async function insertPlan(
  db: Knex,
  plan: NewRun & { base: string | null; expiresAt: Date; target?: PlanTarget; upgrade?: PlanUpgrade },
): Promise<void> {
  await db('incarnation_runs').insert({
    apply_id: plan.applyId,
    incarnation: plan.incarnation,
    operation: plan.operation,
    input: JSON.stringify(plan.input),
    kind: 'plan',
    status: 'running',
    phase: 'queued',
    service_ref: plan.serviceRef,
    service_commit: plan.serviceCommit ?? null,
    created_by: plan.createdBy ?? null,
    plan_base: plan.base,
    expires_at: plan.expiresAt,
    plan_target: plan.target ? JSON.stringify(plan.target) : null,
    plan_upgrade: plan.upgrade ? JSON.stringify(plan.upgrade) : null,
    host_input: hostInputColumn(db, plan),
  });
}

/**
 * The incarnation a run or plan renders and dispatches for. A plan for a create has none yet: it
 * stands in with the plan's service and covens and empty state, as the create run will see them.
 */
/** A plan whose workflow Temporal refused to start: failed with the reason (a plan holds no lock). */
export async function failUnstartedPlan(db: Knex, planId: string, reason: string): Promise<void> {
  await db('incarnation_runs')
    .where({ apply_id: planId, status: 'running' })
    .update({ status: 'failed', phase: 'done', error: reason, finished_at: db.fn.now() });
}

export async function incarnationOf(db: Knex, run: RunRecord): Promise<IncarnationRecord | undefined> {
  const inc = await getIncarnation(db, run.incarnation);
  if (inc || run.kind !== 'plan' || !run.plan_target) return inc;
  const t = run.plan_target;
  return {
    name: run.incarnation,
    service: t.service,
    covens: t.covens,
    state: {},
    state_schema_version: null,
    service_version: t.version,
    service_commit: null,
    status: 'ready',
    current_apply_id: null,
    last_apply_id: null,
    last_committed_apply_id: null,
    created_by: run.created_by,
    created_at: run.created_at,
    updated_at: run.created_at,
    drift_interval: null,
    drift_auto_repair: false,
    drift_status: 'unchecked',
    drift_checked_at: null,
    drift_plan_id: null,
    drifted_sids: [],
    drift_checks_in_sync: 0,
    drift_in_sync_at: null,
    // Applying the plan creates the incarnation with the plan's id as its key (runs/start/plan-apply.ts).
    secrets_key: run.apply_id,
    // The plan of a create records the per-host input it was asked with; applying it makes the incarnation with it.
    host_input: run.host_input,
  };
}

/** Marks a plan applied by `applyId`; false when it was applied already or has expired. */
export async function claimPlan(trx: Knex | Knex.Transaction, planId: string, applyId: string): Promise<boolean> {
  const n = await trx('incarnation_runs')
    .where({ apply_id: planId, kind: 'plan', status: 'succeeded' })
    .whereNull('applied_by')
    .where('expires_at', '>', trx.fn.now())
    .update({ applied_by: applyId });
  return n > 0;
}

/**
 * A run that applies a plan takes the plan's render as its own: the per-host steps, the hosts not
 * targeted, the input as resolved and the state changes. Nothing is rendered again.
 */
export async function adoptPlan(
  db: Knex,
  applyId: string,
  planId: string,
): Promise<{ sids: string[]; serial: unknown; batches?: string[][]; gate?: RunGateSpec }> {
  return db.transaction(async (trx) => {
    const plan = (await trx('incarnation_runs').where({ apply_id: planId, kind: 'plan' }).first()) as
      | RunRecord
      | undefined;
    if (!plan) throw new Error(`plan ${planId} does not exist`);
    await trx('incarnation_runs')
      .where({ apply_id: applyId })
      .update({
        service_commit: plan.service_commit,
        rendered_input: JSON.stringify(plan.rendered_input),
        // The run applies the plan's render, so it records the per-host input that render used.
        host_input: plan.host_input === null ? null : JSON.stringify(plan.host_input),
        state_changes: JSON.stringify(plan.state_changes),
        orchestration: JSON.stringify(plan.orchestration),
        phase: 'dispatching',
      });
    await trx('run_plans').where({ apply_id: applyId }).delete();
    await trx('run_hosts').where({ apply_id: applyId }).delete();
    await trx.raw(
      'insert into run_plans (apply_id, sid, steps, soulprint, reads, host_input) select ?, sid, steps, soulprint, reads, host_input from run_plans where apply_id = ?',
      [applyId, planId],
    );
    await trx.raw(
      `insert into run_hosts (apply_id, sid, status, reason)
      select ?, h.sid, case when p.sid is null then h.status else 'pending' end, case when p.sid is null then h.reason else null end
      from run_hosts h left join run_plans p on p.apply_id = h.apply_id and p.sid = h.sid where h.apply_id = ?`,
      [applyId, planId],
    );
    const sids = (await trx('run_plans').select('sid').where({ apply_id: applyId }).orderBy('sid')).map(
      (r: { sid: string }) => r.sid,
    );
    const orch = plan.orchestration as { serial?: unknown; batches?: string[][]; gate?: RunGateSpec } | null;
    // Plans stored before render kept its batches carry only `serial` (the workflow cuts them then).
    return {
      sids,
      serial: orch?.serial ?? null,
      ...(Array.isArray(orch?.batches) ? { batches: orch.batches } : {}),
      ...(orch?.gate ? { gate: orch.gate } : {}),
    };
  });
}

/** A plan's `gate:` as render stored it in its orchestration (scenario/gate.ts RunGate). */
export interface RunGateSpec {
  health?: string;
  timeoutMs: number;
  intervalMs: number;
  approval: boolean;
}

/** A plan's step rows of some hosts: what the plan saw, to compare with what holds now. */
export async function planStepRows(db: Knex, planId: string, sids: string[]): Promise<Map<string, StepRow[]>> {
  const rows = (await db('run_steps')
    .where({ apply_id: planId })
    .whereIn('sid', sids)
    .orderBy(['sid', 'step_index'])) as StepRow[];
  const out = new Map<string, StepRow[]>();
  for (const r of rows) (out.get(r.sid) ?? out.set(r.sid, []).get(r.sid)!).push(r);
  return out;
}

/** An incarnation's plans, newest first. */
export async function listPlans(
  db: Knex,
  incarnation: string,
  page: { limit: number; after?: string },
): Promise<{ items: RunRecord[]; next?: string }> {
  const q = db('incarnation_runs').where({ incarnation, kind: 'plan' });
  return fetchNewestFirst<RunRecord>(db, q, 'incarnation_runs', 'apply_id', { incarnation }, page, (r) => r.apply_id);
}

/** A plan of an upgrade, rendered: the migrations it would run and the state before and after. */
export async function savePlanUpgrade(db: Knex, planId: string, upgrade: PlanUpgrade): Promise<void> {
  await db('incarnation_runs')
    .where({ apply_id: planId, kind: 'plan' })
    .update({ plan_upgrade: JSON.stringify(upgrade) });
}

/** How a plan ended: `ready` (every targeted host answered its check) or `failed`. */
export async function finishPlan(
  db: Knex,
  planId: string,
  reason?: string,
): Promise<{ status: 'ready' | 'failed'; hosts: Record<string, number> }> {
  return db.transaction(async (trx) => {
    // A host never reached was not checked: the plan cannot say what would happen there. (A
    // `pending` host with a reason was never targeted: registered, not onboarded; it is no failure.)
    await trx('run_hosts')
      .where({ apply_id: planId, status: 'pending' })
      .whereNull('reason')
      .update({ status: 'unknown', reason: 'not checked' });
    const hosts = await hostCounts(trx, planId);
    const bad = hosts.failed + hosts.unknown;
    const error =
      reason ??
      (bad > 0
        ? `${hosts.failed} host(s) failed their check, ${hosts.unknown} did not answer; this plan cannot be applied`
        : null);
    const status = error === null ? 'succeeded' : 'failed';
    const wouldChange = Number(
      (await trx('run_steps').where({ apply_id: planId, changed: true }).count<{ n: string }[]>({ n: '*' }))[0]?.n ?? 0,
    );
    await trx('incarnation_runs')
      .where({ apply_id: planId, kind: 'plan', status: 'running' })
      .update({
        status,
        phase: 'done',
        error,
        summary: JSON.stringify({ hosts, would_change: wouldChange }),
        finished_at: trx.fn.now(),
      });
    return { status: status === 'succeeded' ? ('ready' as const) : ('failed' as const), hosts };
  });
}
