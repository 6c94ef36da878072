// Runs of an incarnation: one row per apply_id (the Temporal workflow id), its rendered plan per
// host, and its report per host and per step. The plan lives here rather than in the workflow's
// history because rendered content may carry secrets; the workflow only ever sees host names.
import type { RunWaitingRecord } from './run-waiting';
import type { Knex } from 'knex';
import type { PlanStep, RenderSkip } from '../../scenario/render/plan';
import { activityTarget, actorKindOf, appendActivity } from './activity';
import { fetchNewestFirst } from './page';
import type { HostInput } from '../../scenario/host-input';

export type RunStatus = 'running' | 'succeeded' | 'failed';
export type RunPhase = 'queued' | 'rendering' | 'dispatching' | 'committing' | 'done';
export type HostStatus = 'pending' | 'ok' | 'changed' | 'failed' | 'unknown' | 'skipped';
export type StepStatus = 'ok' | 'changed' | 'failed' | 'unknown' | 'skipped';
/** Why a step did not run on a host (docs/runs.md "The run report"). */
export type SkipReason = RenderSkip | 'require' | 'onchanges' | 'earlier_failure' | 'secret_unavailable' | 'drift';
/** What a plan for a create would make: the incarnation does not exist until it is applied. */
export interface PlanTarget {
  service: string;
  covens: string[];
  version: string | null;
}
/** A plan of an upgrade (docs/plans.md): the version it moves to, and once rendered the migrations
 *  it would run and the committed state before and after them. */
export interface PlanUpgrade {
  version: string;
  from_version: number | null;
  to_version: number;
  migrations?: number[];
  state_before?: Record<string, unknown>;
  state_after?: Record<string, unknown>;
}
/** A run applies steps; a plan (docs/plans.md) sends them in check mode and changes nothing. */
export type RunKind = 'run' | 'plan';

export interface NewRun {
  applyId: string;
  incarnation: string;
  operation: string;
  input: Record<string, unknown>;
  /** The version (a published ref) the run applies. */
  serviceRef: string;
  /** The commit that version is pinned to: what render loads (absent for a service without versions). */
  serviceCommit?: string;
  retryOf?: string;
  createdBy?: string;
  /** Only these hosts (a new soul converging, runs/converge.ts); absent: every host of the covens. */
  targetSids?: string[];
  /** The plan this run applies (its stored steps, not a new render). */
  planId?: string;
  /** The operator's failure budget for this run ("2", "5%"), within the scenario's `max_failed:`. */
  maxFailed?: string;
  /** Per-host input (scenario/host-input.ts); absent: the incarnation's as it is when the run is recorded. */
  hostInput?: HostInput | null;
}

export interface RunRecord {
  apply_id: string;
  incarnation: string;
  operation: string;
  input: Record<string, unknown>;
  /** The input as render resolved it (defaults filled in); null before render. */
  rendered_input: Record<string, unknown> | null;
  status: RunStatus;
  phase: RunPhase;
  service_ref: string | null;
  service_commit: string | null;
  render_errors: unknown[] | null;
  error: string | null;
  state_changes: Record<string, unknown> | null;
  orchestration: Record<string, unknown> | null;
  summary: Record<string, unknown> | null;
  retry_of: string | null;
  target_sids: string[] | null;
  /** The operator's failure budget for this run; null: the scenario's. */
  max_failed: string | null;
  /** What the run waits for at a gate between batches (db/repos/run-waiting.ts); null: not waiting. */
  waiting?: RunWaitingRecord | null;
  kind: RunKind;
  /** The per-host input the run started with (secret inputs as references); null: none. */
  host_input: HostInput | null;
  plan_id: string | null;
  /** The converge run this run was recorded behind (db/repos/run-queue.ts); null: it took the lock at once. */
  waits_for?: string | null;
  plan_base: string | null;
  expires_at: Date | null;
  applied_by: string | null;
  plan_target: PlanTarget | null;
  plan_upgrade: PlanUpgrade | null;
  created_by: string | null;
  created_at: Date;
  finished_at: Date | null;
}

export interface HostRow {
  apply_id: string;
  sid: string;
  status: HostStatus;
  kid: string | null;
  reason: string | null;
  batch: number | null;
  started_at: Date | null;
  finished_at: Date | null;
}
export interface StepRow {
  apply_id: string;
  sid: string;
  step_index: number;
  name: string | null;
  module: string;
  status: StepStatus;
  changed: boolean;
  output: string;
  attempts: number;
  replayed: boolean;
  started_at: Date | null;
  finished_at: Date | null;
  skip_reason: SkipReason | null;
  /** The step's `changed_when` when it overrode the module's answer (`changed` is its verdict; the module said the opposite). */
  changed_when?: string | null;
  /** What the soul said the step changed (or, in a plan, would change), as the keeper keeps it
   *  (runs/activities/step-diff.ts: keyed digests, no content of a secret step); null when nothing. */
  diff?: Record<string, unknown> | null;
  /** The file the step manages (its params' path), and whether its params carried a secret: what
   *  tells a later plan of that path that the file may hold one (db/repos/step-secrets.ts). */
  path?: string | null;
  secret?: boolean;
}

export async function insertRun(trx: Knex | Knex.Transaction, run: NewRun): Promise<void> {
  await trx('incarnation_runs').insert({
    apply_id: run.applyId,
    incarnation: run.incarnation,
    operation: run.operation,
    input: JSON.stringify(run.input),
    status: 'running',
    phase: 'queued',
    service_ref: run.serviceRef,
    service_commit: run.serviceCommit ?? null,
    retry_of: run.retryOf ?? null,
    created_by: run.createdBy ?? null,
    target_sids: run.targetSids ?? null,
    plan_id: run.planId ?? null,
    ...(run.maxFailed !== undefined ? { max_failed: run.maxFailed } : {}),
    host_input: hostInputColumn(trx, run),
  });
  // A run the keeper starts on its own (converger, drift repair) has no API call to record it: it
  // is recorded here, in the same transaction as the run, so neither exists without the other.
  const kind = actorKindOf(run.createdBy ?? null);
  if (kind === 'converger' || kind === 'drift') {
    await appendActivity(trx, {
      actor: run.createdBy!,
      actorKind: kind,
      via: kind,
      action: `run ${run.operation}`,
      target: activityTarget(run.incarnation),
      status: 202,
      applyId: run.applyId,
    });
  }
}

/**
 * Every run records the per-host input it starts with: the one given (a create), else the
 * incarnation's at this moment, read in the same statement, so each start path (an operator's run,
 * a retry, a converge, a drift repair) takes it without passing it along.
 */
export function hostInputColumn(trx: Knex | Knex.Transaction, run: Pick<NewRun, 'incarnation' | 'hostInput'>) {
  if (run.hostInput !== undefined) return run.hostInput === null ? null : JSON.stringify(run.hostInput);
  return trx.raw('(select host_input from incarnations where name = ?)', [run.incarnation]);
}

export async function getRun(db: Knex | Knex.Transaction, applyId: string): Promise<RunRecord | undefined> {
  return (await db('incarnation_runs').where({ apply_id: applyId }).first()) as RunRecord | undefined;
}

export async function setPhase(db: Knex, applyId: string, phase: RunPhase): Promise<void> {
  await db('incarnation_runs').where({ apply_id: applyId, status: 'running' }).update({ phase });
}

/** Stores a successful render: plan per host (replacing any earlier attempt's), hosts `pending`. */
export async function saveRender(
  db: Knex,
  applyId: string,
  render: {
    serviceCommit: string;
    input: Record<string, unknown>;
    stateChanges: Record<string, unknown>;
    orchestration: Record<string, unknown>;
    /** `reads`: what render read of the host's facts (scenario/render/reads.ts). */
    hosts: {
      sid: string;
      steps: PlanStep[];
      soulprint: Record<string, unknown> | null;
      reads?: { facts: string[] };
      /** The host's per-host input layer (references only), or null. */
      hostInput?: Record<string, unknown> | null;
    }[];
    /** Hosts of the incarnation's covens that are reported but not targeted: `skipped` (the scenario's
     *  `on:`/`where:`) or `pending` (registered, never onboarded). */
    notTargeted: { sid: string; status: 'skipped' | 'pending'; reason: string }[];
  },
): Promise<void> {
  await db.transaction(async (trx) => {
    await trx('incarnation_runs')
      .where({ apply_id: applyId })
      .update({
        service_commit: render.serviceCommit,
        rendered_input: JSON.stringify(render.input),
        state_changes: JSON.stringify(render.stateChanges),
        orchestration: JSON.stringify(render.orchestration),
        phase: 'dispatching',
      });
    await trx('run_plans').where({ apply_id: applyId }).delete();
    await trx('run_hosts').where({ apply_id: applyId }).delete();
    for (let i = 0; i < render.notTargeted.length; i += 500) {
      await trx('run_hosts').insert(
        render.notTargeted
          .slice(i, i + 500)
          .map((h) => ({ apply_id: applyId, sid: h.sid, status: h.status, reason: h.reason })),
      );
    }
    for (let i = 0; i < render.hosts.length; i += 500) {
      const chunk = render.hosts.slice(i, i + 500);
      await trx('run_plans').insert(
        chunk.map((h) => ({
          apply_id: applyId,
          sid: h.sid,
          steps: JSON.stringify(h.steps),
          soulprint: h.soulprint === null ? null : JSON.stringify(h.soulprint),
          reads: h.reads ? JSON.stringify(h.reads) : null,
          host_input: h.hostInput ? JSON.stringify(h.hostInput) : null,
        })),
      );
      await trx('run_hosts').insert(chunk.map((h) => ({ apply_id: applyId, sid: h.sid, status: 'pending' })));
    }
  });
}

export async function saveRenderErrors(
  db: Knex,
  applyId: string,
  serviceCommit: string | null,
  errors: unknown[],
): Promise<void> {
  // A pinned commit recorded at the start stays when the load itself failed (serviceCommit null).
  await db('incarnation_runs')
    .where({ apply_id: applyId })
    .update({
      render_errors: JSON.stringify(errors),
      error: 'render failed; nothing was applied',
      ...(serviceCommit !== null ? { service_commit: serviceCommit } : {}),
    });
}

/** One host's stored render: its steps, the soulprint render used, what it read of it (null: not
 *  recorded), and its per-host input layer (null: none). */
export interface HostPlanRow {
  steps: PlanStep[];
  soulprint: Record<string, unknown> | null;
  reads: { facts: string[] } | null;
  host_input: Record<string, unknown> | null;
}

export async function loadPlans(db: Knex, applyId: string, sids: string[]): Promise<Map<string, HostPlanRow>> {
  const rows = await db('run_plans')
    .select('sid', 'steps', 'soulprint', 'reads', 'host_input')
    .where({ apply_id: applyId })
    .whereIn('sid', sids);
  return new Map(
    rows.map((r: HostPlanRow & { sid: string }) => [
      r.sid,
      { steps: r.steps, soulprint: r.soulprint, reads: r.reads, host_input: r.host_input },
    ]),
  );
}

/** Upserts hosts' outcomes: a retried dispatch overwrites what an interrupted attempt wrote. */
export async function recordHosts(db: Knex, rows: Omit<HostRow, 'apply_id'>[], applyId: string): Promise<void> {
  if (rows.length === 0) return;
  await db('run_hosts')
    .insert(rows.map((r) => ({ ...r, apply_id: applyId })))
    .onConflict(['apply_id', 'sid'])
    .merge();
}

export async function recordSteps(db: Knex, rows: StepRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 1000) {
    const chunk = rows.slice(i, i + 1000).map((r) => ({ ...r, diff: r.diff ? JSON.stringify(r.diff) : null }));
    await db('run_steps').insert(chunk).onConflict(['apply_id', 'sid', 'step_index']).merge();
  }
}

/** Ends the run row; only a running run changes, so a retried activity cannot rewrite an outcome. */
export async function finishRun(
  db: Knex | Knex.Transaction,
  applyId: string,
  outcome: { status: 'succeeded' | 'failed'; error?: string; summary: Record<string, unknown> },
): Promise<boolean> {
  const n = await db('incarnation_runs')
    .where({ apply_id: applyId, status: 'running' })
    .update({
      status: outcome.status,
      phase: 'done',
      error: outcome.error ?? null,
      summary: JSON.stringify(outcome.summary),
      finished_at: db.fn.now(),
    });
  return n > 0;
}

export async function hostCounts(db: Knex | Knex.Transaction, applyId: string): Promise<Record<HostStatus, number>> {
  const rows = await db('run_hosts')
    .select('status')
    .count<{ status: HostStatus; count: string }[]>({ count: '*' })
    .where({ apply_id: applyId })
    .groupBy('status');
  const out: Record<HostStatus, number> = { pending: 0, ok: 0, changed: 0, failed: 0, unknown: 0, skipped: 0 };
  for (const r of rows) out[r.status] = Number(r.count);
  return out;
}

export async function runReport(db: Knex, applyId: string): Promise<{ hosts: HostRow[]; steps: StepRow[] }> {
  const [hosts, steps] = await Promise.all([
    // Hosts in natural order (web2 before web10), as the lists page them.
    db('run_hosts').where({ apply_id: applyId }).orderByRaw('sid collate keeper_natural'),
    db('run_steps').where({ apply_id: applyId }).orderByRaw('sid collate keeper_natural, step_index'),
  ]);
  return { hosts: hosts as HostRow[], steps: (steps as StepRow[]).map(shownDiff) };
}

/**
 * A report's step as viewers read it: whatever a row holds, no plain content hash (only keyed
 * digests are kept, docs/secrets.md) and no content of a step that carried a secret.
 */
function shownDiff(row: StepRow): StepRow {
  if (!row.diff) return row;
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (v === null || typeof v !== 'object') return v;
    return Object.fromEntries(
      Object.entries(v)
        .filter(([k]) => k !== 'sha256' && !(row.secret && (k === 'unified' || k === 'size')))
        .map(([k, x]) => [k, strip(x)]),
    );
  };
  return { ...row, diff: strip(row.diff) as Record<string, unknown> };
}

export async function lastRunOf(db: Knex, incarnation: string): Promise<RunRecord | undefined> {
  return (await db('incarnation_runs').where({ incarnation, kind: 'run' }).orderBy('created_at', 'desc').first()) as
    | RunRecord
    | undefined;
}

export async function runsByIds(db: Knex, ids: string[]): Promise<Map<string, RunRecord>> {
  if (ids.length === 0) return new Map();
  const rows = (await db('incarnation_runs').whereIn('apply_id', ids)) as RunRecord[];
  return new Map(rows.map((r) => [r.apply_id, r]));
}

/** An incarnation's runs, newest first; `after` is the apply_id that ended the previous page. */
export async function listRuns(
  db: Knex,
  incarnation: string,
  page: { limit: number; after?: string },
  since?: Date,
): Promise<{ items: RunRecord[]; next?: string }> {
  const q = db('incarnation_runs').where({ incarnation, kind: 'run' });
  // A name taken again after a deletion lists its own runs only.
  if (since) q.where('created_at', '>=', since);
  return fetchNewestFirst<RunRecord>(db, q, 'incarnation_runs', 'apply_id', { incarnation }, page, (r) => r.apply_id);
}

/** Hosts of a run that will not be dispatched (an earlier batch failed), with the reason. */
export async function markHostsSkipped(db: Knex, applyId: string, sids: string[], reason: string): Promise<void> {
  await db('run_hosts').where({ apply_id: applyId }).whereIn('sid', sids).update({ status: 'skipped', reason });
}

/** The commit a run's service version resolved to (an upgrade records the one it migrated with). */
export async function setRunServiceCommit(db: Knex | Knex.Transaction, applyId: string, commit: string): Promise<void> {
  await db('incarnation_runs').where({ apply_id: applyId }).update({ service_commit: commit });
}
