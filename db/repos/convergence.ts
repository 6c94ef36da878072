// What the converger (runs/converge.ts) reads and writes: souls onboarded since they last converged,
// the incarnations of their covens, and whether a converge run already went to a soul.
import type { Knex } from 'knex';

export interface ConvergeCandidate {
  sid: string;
  covens: string[];
}

/**
 * Onboarded souls not yet converged that can be reached now: an agent soul once its stream is up
 * (a run started earlier would find it silent and lock), a soul of another transport at once.
 */
export async function convergeCandidates(db: Knex, limit: number): Promise<ConvergeCandidate[]> {
  return (await db('souls')
    .select('sid', 'covens')
    .whereNotNull('onboarded_at')
    .whereNull('converged_at')
    .whereNot('status', 'revoked')
    .where((q) => {
      q.where('status', 'connected').orWhereNot('transport', 'agent');
    })
    .orderBy('onboarded_at')
    .limit(limit)) as ConvergeCandidate[];
}

export interface CovenIncarnation {
  name: string;
  service: string;
  status: string;
  service_version: string | null;
  last_committed_apply_id: string | null;
  /** The run in flight while `applying`. */
  current_apply_id?: string | null;
}

export async function incarnationsOfCovens(db: Knex, covens: string[]): Promise<CovenIncarnation[]> {
  if (covens.length === 0) return [];
  return (await db('incarnations')
    .select('name', 'service', 'status', 'service_version', 'last_committed_apply_id')
    .whereRaw('covens && ?::text[]', [covens])
    .orderBy('name')) as CovenIncarnation[];
}

/** A converge run of this incarnation already targeted this soul (started by any keeper). */
export async function convergeRunExists(db: Knex, incarnation: string, sid: string): Promise<boolean> {
  const row = await db('incarnation_runs')
    .select('apply_id')
    .where({ incarnation })
    .whereRaw('target_sids @> ?::text[]', [[sid]])
    .first();
  return row !== undefined;
}

export async function markConverged(db: Knex, sid: string): Promise<void> {
  await db('souls').where({ sid }).whereNull('converged_at').update({ converged_at: db.fn.now() });
}

/** The soul is one of that run's hosts, in any status (`pending` included): its render chose it. */
export async function isHostOfRun(db: Knex, applyId: string, sid: string): Promise<boolean> {
  const row = await db('run_hosts').select('sid').where({ apply_id: applyId, sid }).first();
  return row !== undefined;
}

/** The soul was a host of that run (targeted, or left out by the scenario's `on:`/`where:`), not merely `pending`. */
export async function wasHostOf(db: Knex, applyId: string, sid: string): Promise<boolean> {
  const row = await db('run_hosts')
    .select('sid')
    .where({ apply_id: applyId, sid })
    .whereNot('status', 'pending')
    .first();
  return row !== undefined;
}

/**
 * Sets a soul's covens. When it gains a coven and is onboarded, it is converged again: the converger
 * brings it the ready incarnations of its covens that it was not a host of (the others are found done).
 * Returns the covens before, or undefined when the soul does not exist.
 */
export async function changeCovens(db: Knex, sid: string, covens: string[]): Promise<{ before: string[] } | undefined> {
  return db.transaction(async (trx) => {
    const row = (await trx('souls').select('covens', 'onboarded_at').where({ sid }).forUpdate().first()) as
      | { covens: string[]; onboarded_at: Date | null }
      | undefined;
    if (!row) return undefined;
    const gains = covens.some((c) => !row.covens.includes(c));
    await trx('souls')
      .where({ sid })
      .update({
        covens,
        updated_at: trx.fn.now(),
        ...(gains && row.onboarded_at !== null ? { converged_at: null } : {}),
      });
    return { before: row.covens };
  });
}

/**
 * Per incarnation, the new souls it may be missing (issue 30: the converger starts one run per
 * incarnation for all of them, not one per soul): the incarnations of these souls' covens, each
 * with the souls of its covens, plus the incarnations that have a pending host back (with none).
 */
export async function incarnationsToConverge(
  db: Knex,
  souls: ConvergeCandidate[],
  withReturned: string[],
): Promise<{ inc: CovenIncarnation; sids: string[] }[]> {
  const covens = [...new Set(souls.flatMap((s) => s.covens))];
  if (covens.length === 0 && withReturned.length === 0) return [];
  const rows = (await db('incarnations')
    .select('name', 'service', 'status', 'service_version', 'last_committed_apply_id', 'covens')
    .where((q) => {
      if (covens.length > 0) q.whereRaw('covens && ?::text[]', [covens]);
      if (withReturned.length > 0) q.orWhereIn('name', withReturned);
    })
    .orderBy('name')) as (CovenIncarnation & { covens: string[] })[];
  return rows.map(({ covens: of, ...inc }) => ({
    inc,
    sids: souls.filter((s) => s.covens.some((c) => of.includes(c))).map((s) => s.sid),
  }));
}

/** Of `sids`, those this incarnation already reached: a converge run targeted them, or they were hosts of its last committed run. */
export async function alreadyReached(
  db: Knex,
  incarnation: string,
  lastCommitted: string | null,
  sids: string[],
): Promise<Set<string>> {
  if (sids.length === 0) return new Set();
  const targeted = (
    await db.raw(
      'select distinct t.sid from incarnation_runs r, unnest(r.target_sids) as t(sid) where r.incarnation = ? and r.target_sids && ?::text[] and t.sid = any(?::text[])',
      [incarnation, sids, sids],
    )
  ).rows as { sid: string }[];
  const hosts =
    lastCommitted === null
      ? []
      : ((await db('run_hosts')
          .select('sid')
          .where({ apply_id: lastCommitted })
          .whereIn('sid', sids)
          .whereNot('status', 'pending')) as { sid: string }[]);
  return new Set([...targeted, ...hosts].map((r) => r.sid));
}

/**
 * How many more hosts this incarnation may soon have to reach (the converger's gathering window,
 * runs/converge-gather.ts): its pending hosts whose soul is not connected, and agent souls of its
 * covens onboarded but neither converged nor connected. While there are some, a run for the hosts
 * already here waits a moment for them; when there are none it starts at once.
 */
export async function hostsOnTheWay(db: Knex, incarnation: string): Promise<number> {
  const { rows } = (await db.raw(
    `select
       (select count(*) from incarnation_pending_hosts p join souls s on s.sid = p.sid
         where p.incarnation = :inc and s.status not in ('connected', 'revoked'))
     + (select count(*) from souls s join incarnations i on i.name = :inc and s.covens && i.covens
         where s.onboarded_at is not null and s.converged_at is null and s.transport = 'agent'
           and s.status not in ('connected', 'revoked')) as n`,
    { inc: incarnation },
  )) as { rows: { n: string }[] };
  return Number(rows[0]?.n ?? 0);
}
