// The registry snapshot of presence (interface spec 3.1): status, connected_kid, soulprint and
// last_seen_at, written by the keeper holding a soul's stream and by the reconciler. Every write is
// fenced by the presence epoch (hub/presence.ts) so the snapshot only moves forward: an older
// session's "connected" never lands after a newer one's, and a "disconnected" only clears the epoch
// it saw.
import type { Knex } from 'knex';

export type Soulprint = Record<string, unknown>;

/**
 * Marks the soul connected by `kid` at `epoch`. Refused (false) when a newer epoch is already
 * recorded as connected, or when the SID is not registered. A recorded epoch that is higher but no
 * longer connected does not block: after a cache flush the epoch counter restarts low.
 */
export async function recordConnected(
  db: Knex,
  p: { sid: string; kid: string; epoch: number; soulprint?: Soulprint; now?: Date },
): Promise<boolean> {
  const now = p.now ?? new Date();
  const changes: Record<string, unknown> = {
    status: 'connected',
    connected_kid: p.kid,
    presence_epoch: p.epoch,
    last_seen_at: now,
    updated_at: now,
  };
  // The reconciler repairs kid and epoch from a lease and has no facts: it leaves the soulprint alone.
  if (p.soulprint !== undefined) changes.soulprint = p.soulprint;
  const n = await db('souls')
    .where({ sid: p.sid })
    .whereNot('status', 'revoked')
    .where((q) =>
      q.whereNot('status', 'connected').orWhereNull('presence_epoch').orWhere('presence_epoch', '<=', p.epoch),
    )
    .update(changes);
  return n > 0;
}

/** New facts from the session holding `epoch`. */
export async function recordSoulprint(
  db: Knex,
  p: { sid: string; epoch: number; soulprint: Soulprint; now?: Date },
): Promise<boolean> {
  const now = p.now ?? new Date();
  const n = await db('souls')
    .where({ sid: p.sid, presence_epoch: p.epoch })
    .update({ soulprint: p.soulprint as never, last_seen_at: now, updated_at: now });
  return n > 0;
}

/**
 * Marks souls disconnected, each only if still connected at an epoch no newer than the one given.
 * One statement for many souls, for a keeper draining its sessions and for the reconciler.
 * Returns the SIDs that changed.
 */
export async function recordDisconnected(
  db: Knex,
  items: { sid: string; epoch: number; lastSeen?: Date }[],
  now = new Date(),
): Promise<string[]> {
  if (items.length === 0) return [];
  const res = (await db.raw(
    `update souls s set status = 'disconnected', last_seen_at = coalesce(v.last_seen, s.last_seen_at), updated_at = ?
       from unnest(?::text[], ?::bigint[], ?::timestamptz[]) as v(sid, epoch, last_seen)
      where s.sid = v.sid and s.status = 'connected' and (s.presence_epoch is null or s.presence_epoch <= v.epoch)
      returning s.sid`,
    [now, items.map((i) => i.sid), items.map((i) => i.epoch), items.map((i) => i.lastSeen ?? null) as Date[]],
  )) as { rows: { sid: string }[] };
  return res.rows.map((r) => r.sid);
}

/** Moves last_seen_at forward for live sessions (coarse: the reconciler calls it every few passes). */
export async function touchLastSeen(db: Knex, items: { sid: string; epoch: number; seen: Date }[]): Promise<void> {
  if (items.length === 0) return;
  await db.raw(
    `update souls s set last_seen_at = v.seen
       from unnest(?::text[], ?::bigint[], ?::timestamptz[]) as v(sid, epoch, seen)
      where s.sid = v.sid and s.presence_epoch = v.epoch and (s.last_seen_at is null or s.last_seen_at < v.seen)`,
    [items.map((i) => i.sid), items.map((i) => i.epoch), items.map((i) => i.seen)],
  );
}

export interface ConnectedRow {
  sid: string;
  kid: string | null;
  epoch: number | null;
}

/** A page of souls the snapshot says are connected, by SID. */
export async function connectedPage(db: Knex, after: string | undefined, limit: number): Promise<ConnectedRow[]> {
  const q = db('souls').select('sid', 'connected_kid as kid', 'presence_epoch as epoch').where({ status: 'connected' });
  if (after !== undefined) q.where('sid', '>', after);
  const rows = (await q.orderBy('sid').limit(limit)) as { sid: string; kid: string | null; epoch: string | null }[];
  return rows.map((r) => ({ sid: r.sid, kid: r.kid, epoch: r.epoch === null ? null : Number(r.epoch) }));
}

/** Whether the SID is registered as an agent-transport soul (the stream accepts only those). */
export async function isRegisteredAgent(db: Knex, sid: string): Promise<boolean> {
  return (await agentAdmission(db, sid)).registered;
}

export interface Admission {
  registered: boolean;
  onboarded: boolean;
  revoked: boolean;
  certSerial: string | null;
  pendingSerial: string | null;
}

/** What the event stream needs to admit a certificate for `sid`: registered, onboarded, not revoked, which serials. */
export async function agentAdmission(db: Knex, sid: string): Promise<Admission> {
  const row = (await db('souls')
    .select('status', 'onboarded_at', 'cert_serial', 'cert_serial_pending')
    .where({ sid, transport: 'agent' })
    .first()) as
    | { status: string; onboarded_at: Date | null; cert_serial: string | null; cert_serial_pending: string | null }
    | undefined;
  if (!row) return { registered: false, onboarded: false, revoked: false, certSerial: null, pendingSerial: null };
  return {
    registered: true,
    onboarded: row.onboarded_at !== null,
    revoked: row.status === 'revoked',
    certSerial: row.cert_serial,
    pendingSerial: row.cert_serial_pending,
  };
}

/**
 * Of `sids`, the souls seen connected within the last `withinMs` (last_seen_at: written when a stream
 * opens or closes, and every 30 s while it lives), revoked ones aside: after a keeper restart these
 * are reconnecting, and a run's first routing waits a little for them (runs/activities/locate-wait.ts).
 */
export async function recentlyConnected(db: Knex, sids: string[], withinMs: number): Promise<Set<string>> {
  if (sids.length === 0) return new Set();
  const rows = (await db('souls')
    .select('sid')
    .whereRaw('sid = any(?::text[])', [sids])
    .whereNot('status', 'revoked')
    .whereRaw("last_seen_at > now() - (? * interval '1 millisecond')", [withinMs])) as { sid: string }[];
  return new Set(rows.map((r) => r.sid));
}
