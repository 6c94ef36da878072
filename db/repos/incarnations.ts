// Incarnations (interface spec 2.4, 3.2). The row's `status` is the lock: a run may start only from
// `ready` (or as the first run of a new incarnation), it sets `applying`, and it ends in exactly one
// of two transactions: commit (state + history snapshot + `ready`) or lock (`error_locked`, nothing
// else touched, so the previous consistent state stays). Both are fenced by the run's apply_id, so
// a late or repeated activity can never commit or lock on behalf of another run.
import type { Knex } from 'knex';
import { RepoConflict, RepoNotFound, isUniqueViolation } from './errors';
import { fetchPage, type Page, type PageRequest } from './page';
import { insertRun, type NewRun } from './runs';
import { hasHostInput, type HostInput } from '../../scenario/host-input';

export type IncarnationStatus = 'applying' | 'ready' | 'error_locked';
export const INCARNATION_STATUSES: readonly IncarnationStatus[] = ['applying', 'ready', 'error_locked'];

export interface IncarnationRecord {
  name: string;
  service: string;
  covens: string[];
  state: Record<string, unknown>;
  state_schema_version: number | null;
  /** The published version the incarnation runs with (null: registered before versions; its service's ref). */
  service_version: string | null;
  service_commit: string | null;
  status: IncarnationStatus;
  current_apply_id: string | null;
  last_apply_id: string | null;
  last_committed_apply_id: string | null;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  /** Drift checks (docs/drift.md): null interval = none scheduled. */
  drift_interval: string | null;
  drift_auto_repair: boolean;
  drift_status: DriftStatus;
  drift_checked_at: Date | null;
  drift_plan_id: string | null;
  drifted_sids: string[];
  /** Checks that found every host in sync (they keep no plan once a later check is recorded) and the last one's end. */
  drift_checks_in_sync: number;
  drift_in_sync_at: Date | null;
  /** Where its secret inputs' values are stored (common/secret.ts incarnationSecretPrefix); null: made before keys. */
  secrets_key: string | null;
  /** Per-host input by sid and by coven (scenario/host-input.ts); secret inputs as references. Null: none. */
  host_input: HostInput | null;
}

export type DriftStatus = 'unchecked' | 'in_sync' | 'drifted' | 'check_failed';

export interface HistoryRecord {
  id: string;
  incarnation: string;
  apply_id: string;
  operation: string;
  state: Record<string, unknown>;
  state_schema_version: number | null;
  service_commit: string | null;
  created_at: Date;
}

/** A run that may not start, with the reason an operator can act on. */
export class RunRefused extends RepoConflict {
  constructor(
    readonly status: IncarnationStatus,
    message: string,
  ) {
    super('duplicate', message);
    this.name = 'RunRefused';
  }
}

export async function getIncarnation(
  db: Knex | Knex.Transaction,
  name: string,
): Promise<IncarnationRecord | undefined> {
  return (await db('incarnations').where({ name }).first()) as IncarnationRecord | undefined;
}

export function listIncarnations(
  db: Knex,
  filter: { status?: IncarnationStatus; service?: string },
  page: PageRequest,
): Promise<Page<IncarnationRecord>> {
  const q = db('incarnations').select('*');
  if (filter.status) q.where('status', filter.status);
  if (filter.service) q.where('service', filter.service);
  return fetchPage<IncarnationRecord>(q, 'name', page, (r) => r.name);
}

/** Creates the incarnation already `applying` its first run, in one transaction. */
export async function createIncarnation(
  db: Knex,
  inc: {
    name: string;
    service: string;
    covens: string[];
    version?: string;
    createdBy?: string;
    secretsKey: string;
    hostInput?: HostInput | null;
  },
  run: NewRun,
  opts: { within?: (trx: Knex.Transaction) => Promise<void> } = {},
): Promise<IncarnationRecord> {
  try {
    return await db.transaction(async (trx) => {
      const [row] = await trx('incarnations')
        .insert({
          name: inc.name,
          service: inc.service,
          covens: inc.covens,
          status: 'applying',
          state: {},
          service_version: inc.version ?? null,
          current_apply_id: run.applyId,
          last_apply_id: run.applyId,
          created_by: inc.createdBy ?? null,
          secrets_key: inc.secretsKey,
          host_input: hasHostInput(inc.hostInput) ? JSON.stringify(inc.hostInput) : null,
        })
        .returning('*');
      await insertRun(trx, run);
      await opts.within?.(trx);
      return row as IncarnationRecord;
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new RepoConflict('duplicate', `incarnation ${inc.name} already exists`);
    throw err;
  }
}

/**
 * Replaces the per-host input (already checked). It takes effect at the next run or plan: a run
 * already recorded keeps the copy it started with.
 */
export async function setHostInput(db: Knex, name: string, hostInput: HostInput | null): Promise<IncarnationRecord> {
  const [row] = await db('incarnations')
    .where({ name })
    .update({ host_input: hasHostInput(hostInput) ? JSON.stringify(hostInput) : null, updated_at: db.fn.now() })
    .returning('*');
  if (!row) throw new RepoNotFound(`incarnation ${name} does not exist`);
  return row as IncarnationRecord;
}

/** The lock's refusal (a 409): error_locked, or applying another run (`message`: a more exact sentence). */
export function refusal(inc: IncarnationRecord, message?: string): RunRefused {
  if (inc.status === 'error_locked') {
    return new RunRefused(
      inc.status,
      `incarnation ${inc.name} is error_locked after run ${inc.last_apply_id}: ` +
        `fix the cause, then POST /v1/incarnations/${inc.name}/unlock (with {"retry": true} to run the failed operation again)`,
    );
  }
  return new RunRefused(
    inc.status,
    message ?? `incarnation ${inc.name} is applying run ${inc.current_apply_id}; wait for it to finish`,
  );
}

/**
 * Takes the lock for a new run: `ready` -> `applying` (or, with `fromLocked`, `error_locked` ->
 * `applying` for unlock-with-retry). One conditional UPDATE, so of two concurrent requests one wins.
 */
export async function beginRun(
  db: Knex,
  name: string,
  run: NewRun,
  opts: {
    fromLocked?: boolean;
    /** Runs in the same transaction after the lock is taken; a throw releases the lock (a plan claimed once). */
    within?: (trx: Knex.Transaction) => Promise<void>;
  } = {},
): Promise<void> {
  await db.transaction(async (trx) => {
    const from: IncarnationStatus = opts.fromLocked ? 'error_locked' : 'ready';
    const n = await trx('incarnations').where({ name, status: from }).update({
      status: 'applying',
      current_apply_id: run.applyId,
      last_apply_id: run.applyId,
      updated_at: trx.fn.now(),
    });
    if (n === 0) {
      const inc = await getIncarnation(trx, name);
      if (!inc) throw new RepoNotFound(`incarnation ${name} does not exist`);
      if (opts.fromLocked)
        throw new RunRefused(inc.status, `incarnation ${name} is ${inc.status}, not error_locked: nothing to unlock`);
      throw refusal(inc);
    }
    await insertRun(trx, run);
    await opts.within?.(trx);
  });
}

/** Clears `error_locked` without running anything. */
export async function unlockIncarnation(db: Knex, name: string): Promise<IncarnationRecord> {
  const [row] = await db('incarnations')
    .where({ name, status: 'error_locked' })
    .update({ status: 'ready', current_apply_id: null, updated_at: db.fn.now() })
    .returning('*');
  if (row) return row as IncarnationRecord;
  const inc = await getIncarnation(db, name);
  if (!inc) throw new RepoNotFound(`incarnation ${name} does not exist`);
  throw new RunRefused(inc.status, `incarnation ${name} is ${inc.status}, not error_locked: nothing to unlock`);
}

/**
 * The commit of a successful run: new state, a history snapshot (when it changed) and `ready`, in the caller's
 * transaction. Returns false (and changes nothing) when this run no longer holds the lock, which
 * makes a retried commit activity harmless.
 */
export async function commitState(
  trx: Knex.Transaction,
  name: string,
  applyId: string,
  commit: {
    operation: string;
    state: Record<string, unknown>;
    stateSchemaVersion: number | null;
    serviceCommit: string | null;
    /** The version the run applied (its service_ref); absent: unchanged. */
    serviceVersion?: string | null;
    /** Add a history snapshot; false when the state did not change (a run that changed nothing). */
    snapshot: boolean;
  },
): Promise<boolean> {
  const n = await trx('incarnations')
    .where({ name, status: 'applying', current_apply_id: applyId })
    .update({
      status: 'ready',
      state: JSON.stringify(commit.state),
      state_schema_version: commit.stateSchemaVersion,
      service_commit: commit.serviceCommit,
      ...(commit.serviceVersion ? { service_version: commit.serviceVersion } : {}),
      current_apply_id: null,
      last_committed_apply_id: applyId,
      updated_at: trx.fn.now(),
    });
  if (n === 0) return false;
  if (!commit.snapshot) return true;
  await trx('incarnation_history').insert({
    incarnation: name,
    apply_id: applyId,
    operation: commit.operation,
    state: JSON.stringify(commit.state),
    state_schema_version: commit.stateSchemaVersion,
    service_commit: commit.serviceCommit,
  });
  return true;
}

/** The failure path: `error_locked`, nothing else. False when this run no longer holds the lock. */
export async function lockIncarnation(trx: Knex | Knex.Transaction, name: string, applyId: string): Promise<boolean> {
  const n = await trx('incarnations')
    .where({ name, status: 'applying', current_apply_id: applyId })
    .update({ status: 'error_locked', updated_at: trx.fn.now() });
  return n > 0;
}

/**
 * The end of an incarnation (issue 17 item 6), in the caller's transaction: the row moves to
 * incarnation_tombstones and the name is free again. Its runs and history stay where they are.
 */
export async function removeIncarnation(
  trx: Knex.Transaction,
  name: string,
  how: { applyId?: string; by?: string; forced: boolean },
): Promise<boolean> {
  const [row] = (await trx('incarnations').where({ name }).delete().returning('*')) as IncarnationRecord[];
  if (!row) return false;
  await trx('incarnation_tombstones').insert({
    name: row.name,
    service: row.service,
    covens: row.covens,
    state: JSON.stringify(row.state),
    state_schema_version: row.state_schema_version,
    service_version: row.service_version,
    service_commit: row.service_commit,
    deleted_apply_id: how.applyId ?? null,
    deleted_by: how.by ?? null,
    forced: how.forced,
    created_at: row.created_at,
  });
  return true;
}

export interface TombstoneRecord {
  name: string;
  service: string;
  deleted_apply_id: string | null;
  deleted_by: string | null;
  forced: boolean;
  deleted_at: Date;
  created_at: Date;
}

export async function lastTombstone(db: Knex, name: string): Promise<TombstoneRecord | undefined> {
  return (await db('incarnation_tombstones').where({ name }).orderBy('id', 'desc').first()) as
    | TombstoneRecord
    | undefined;
}

/**
 * History of a name. `since` is the live incarnation's creation: a name freed by a deletion and
 * taken again does not show the deleted incarnation's snapshots as its own.
 */
export function listHistory(db: Knex, name: string, page: PageRequest, since?: Date): Promise<Page<HistoryRecord>> {
  const q = db('incarnation_history').select('*').where({ incarnation: name });
  if (since) q.where('created_at', '>=', since);
  // History ids are bigserials: the keyset compares them as numbers, not as text.
  return fetchPage<HistoryRecord>(q, 'id', page, (r) => String(r.id), Number).then((p) => ({
    ...p,
    items: p.items.map((r) => ({ ...r, id: String(r.id) })),
  }));
}
