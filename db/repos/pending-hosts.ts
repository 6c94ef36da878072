// Hosts an incarnation's committed state has not reached yet (issue 30): failed or unknown in a run
// that committed within its failure budget. They are shown with the incarnation, counted in
// metrics, and brought in by the converger (runs/converge.ts) once their soul holds a new stream,
// exactly as a new host; a committed run that applied to them removes them.
import type { Knex } from 'knex';

export interface PendingHost {
  incarnation: string;
  sid: string;
  apply_id: string;
  status: 'failed' | 'unknown';
  reason: string | null;
  since: Date;
}

/**
 * At a run's commit (same transaction): its failed and unknown hosts become pending for the
 * incarnation, its succeeded hosts stop being pending. Returns how many are pending after it.
 */
export async function settlePendingHosts(trx: Knex.Transaction, incarnation: string, applyId: string): Promise<number> {
  const hosts = (await trx('run_hosts as h')
    .leftJoin('souls as s', 's.sid', 'h.sid')
    .select('h.sid', 'h.status', 'h.reason', 's.presence_epoch as epoch')
    .where('h.apply_id', applyId)
    .whereIn('h.status', ['ok', 'changed', 'failed', 'unknown'])) as {
    sid: string;
    status: string;
    reason: string | null;
    epoch: string | null;
  }[];
  const done = hosts.filter((h) => h.status === 'ok' || h.status === 'changed').map((h) => h.sid);
  for (let i = 0; i < done.length; i += 500)
    await trx('incarnation_pending_hosts')
      .where({ incarnation })
      .whereIn('sid', done.slice(i, i + 500))
      .delete();
  const left = hosts.filter((h) => h.status === 'failed' || h.status === 'unknown');
  for (let i = 0; i < left.length; i += 500) {
    await trx('incarnation_pending_hosts')
      .insert(
        left.slice(i, i + 500).map((h) => ({
          incarnation,
          sid: h.sid,
          apply_id: applyId,
          status: h.status,
          reason: h.reason,
          epoch: h.epoch,
          since: trx.fn.now(),
        })),
      )
      .onConflict(['incarnation', 'sid'])
      .merge();
  }
  const [{ n }] = (await trx('incarnation_pending_hosts').where({ incarnation }).count({ n: '*' })) as { n: string }[];
  return Number(n);
}

export async function listPendingHosts(db: Knex, incarnation: string): Promise<PendingHost[]> {
  return (await db('incarnation_pending_hosts')
    .select('incarnation', 'sid', 'apply_id', 'status', 'reason', 'since')
    .where({ incarnation })
    .orderBy('sid')) as PendingHost[];
}

/** Pending hosts per incarnation, for the metric. */
export async function pendingCounts(db: Knex): Promise<Map<string, number>> {
  const rows = (await db('incarnation_pending_hosts')
    .select('incarnation')
    .count({ n: '*' })
    .groupBy('incarnation')) as { incarnation: string; n: string }[];
  return new Map(rows.map((r) => [r.incarnation, Number(r.n)]));
}

/**
 * Pending hosts whose soul came back: connected on a newer stream than when it was left pending
 * (or, for a soul without a stream, such as SSH, never: its next operator run includes it). A host
 * that failed for its own reasons while connected is not retried every second.
 */
export async function returnedPendingHosts(db: Knex, incarnation: string): Promise<string[]> {
  const rows = (await db('incarnation_pending_hosts as p')
    .join('souls as s', 's.sid', 'p.sid')
    .select('p.sid')
    .where('p.incarnation', incarnation)
    .where('s.status', 'connected')
    .whereNot('s.status', 'revoked')
    .where((q) => {
      q.whereNull('p.epoch').orWhereRaw('s.presence_epoch is distinct from p.epoch');
    })
    .orderBy('p.sid')) as { sid: string }[];
  return rows.map((r) => r.sid);
}

/** Incarnations with at least one pending host whose soul came back (returnedPendingHosts). */
export async function incarnationsWithReturnedHosts(db: Knex, limit: number): Promise<string[]> {
  const rows = (await db('incarnation_pending_hosts as p')
    .join('souls as s', 's.sid', 'p.sid')
    .distinct('p.incarnation')
    .where('s.status', 'connected')
    .where((q) => {
      q.whereNull('p.epoch').orWhereRaw('s.presence_epoch is distinct from p.epoch');
    })
    .orderBy('p.incarnation')
    .limit(limit)) as { incarnation: string }[];
  return rows.map((r) => r.incarnation);
}
