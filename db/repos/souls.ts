// The agent registry (interface spec 2.2, 3.1). Registration creates the soul and its first bootstrap
// token in one transaction, so a soul never exists without a way to onboard it. The status written
// here is the lazy snapshot; the live stream's lease in the cache is the authority for "online".
import type { Knex } from 'knex';
import { issueBootstrapToken } from './bootstrap-tokens';
import { RepoConflict } from './errors';
import { fetchPage, type Page, type PageRequest } from './page';

export type SoulStatus = 'pending' | 'connected' | 'disconnected' | 'revoked';
export const SOUL_STATUSES: readonly SoulStatus[] = ['pending', 'connected', 'disconnected', 'revoked'];

export interface SoulRecord {
  sid: string;
  transport: string;
  covens: string[];
  status: SoulStatus;
  soulprint: Record<string, unknown> | null;
  last_seen_at: Date | null;
  connected_kid: string | null;
  cert_serial: string | null;
  /** Expiry of the live certificate (null for a soul onboarded before expiries were kept, or never). */
  cert_not_after: Date | null;
  /** Set by a revocation; cleared when the soul is onboarded again. */
  revoked_at: Date | null;
  onboarded_at: Date | null;
  created_at: Date;
  updated_at: Date;
  /** Expiry of the unused bootstrap token, if one exists (a past time means it expired unused). */
  bootstrap_token_expires_at: Date | null;
  /** Transport `ssh` only (null for agents): how the keeper reaches the host. No key material. */
  ssh: SshSettings | null;
  /** Transport `ssh`: the last successful connection, and the last failure (cleared by a success). */
  last_contact_at: Date | null;
  last_error: string | null;
}

/**
 * How a keeper reaches an SSH host (issue 15). `credential_ref` names the private key in the secrets
 * store (`secretstore:<path>#<field>`); the key is read at connect time and kept nowhere.
 * `host_key` is the pinned public key (`<type> <base64>`); null only while `trust_on_first_use`
 * waits for the first connection, which records the key it saw.
 */
export interface SshSettings {
  address: string;
  port: number;
  user: string;
  host_key: string | null;
  credential_ref: string;
  sudo: boolean;
  trust_on_first_use: boolean;
}

export interface SoulFilter {
  coven?: string;
  status?: SoulStatus /** case-insensitive part of the SID */;
  sid?: string;
}

/** `%` and `_` in an operator's search are letters, not patterns. */
function likeContains(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function applyFilter(q: Knex.QueryBuilder, filter: Omit<SoulFilter, 'status'>): Knex.QueryBuilder {
  if (filter.coven !== undefined) q.whereRaw('s.covens @> array[?]::text[]', [filter.coven]);
  if (filter.sid !== undefined) q.whereRaw("s.sid ILIKE ? ESCAPE '\\'", [likeContains(filter.sid)]);
  return q;
}

/** Souls per status among those matching the filter (its status left out: the counts are the tabs). */
export async function countSoulsByStatus(
  db: Knex,
  filter: Omit<SoulFilter, 'status'>,
): Promise<Record<SoulStatus, number>> {
  const q = applyFilter(db('souls as s').select('s.status').count({ count: '*' }), filter).groupBy('s.status');
  const rows = (await q) as { status: SoulStatus; count: string }[];
  const out = Object.fromEntries(SOUL_STATUSES.map((st) => [st, 0])) as Record<SoulStatus, number>;
  for (const r of rows) out[r.status] = Number(r.count);
  return out;
}

// The partial unique index guarantees at most one unused token per soul, so this join adds no rows.
function selectSouls(db: Knex): Knex.QueryBuilder {
  return db('souls as s')
    .leftJoin('bootstrap_tokens as bt', function joinActive() {
      this.on('bt.sid', '=', 's.sid').andOnNull('bt.used_at');
    })
    .select(
      's.sid',
      's.transport',
      's.covens',
      's.status',
      's.soulprint',
      's.last_seen_at',
      's.connected_kid',
      's.cert_serial',
      's.cert_not_after',
      's.revoked_at',
      's.onboarded_at',
      's.created_at',
      's.updated_at',
      'bt.expires_at as bootstrap_token_expires_at',
      's.ssh',
      's.last_contact_at',
      's.last_error',
    );
}

/**
 * Registers a soul with status `pending` and issues its first bootstrap token. Throws
 * RepoConflict('duplicate') when the SID is taken; concurrent registrations of one SID create one soul.
 */
export async function registerSoul(
  db: Knex,
  input: { sid: string; transport: string; covens: string[] },
  opts: { tokenTtlMs: number; now?: Date },
): Promise<{ soul: SoulRecord; token: string; expiresAt: Date }> {
  const now = opts.now ?? new Date();
  return db.transaction(async (trx) => {
    const inserted = await trx('souls')
      .insert({
        sid: input.sid,
        transport: input.transport,
        covens: input.covens,
        status: 'pending',
        created_at: now,
        updated_at: now,
      })
      .onConflict('sid')
      .ignore()
      .returning('sid');
    if (inserted.length === 0) throw new RepoConflict('duplicate', `soul ${input.sid} is already registered`);
    const { token, expiresAt } = await issueBootstrapToken(trx, input.sid, {
      force: false,
      ttlMs: opts.tokenTtlMs,
      now,
    });
    const soul = (await selectSouls(trx).where('s.sid', input.sid).first()) as SoulRecord;
    return { soul, token, expiresAt };
  });
}

/**
 * Registers a soul reached over SSH: no bootstrap token (there is nothing to onboard), status
 * `pending` until the first successful connection. Throws RepoConflict('duplicate') when the SID is taken.
 */
export async function registerSshSoul(
  db: Knex,
  input: { sid: string; covens: string[]; ssh: SshSettings },
  now = new Date(),
): Promise<SoulRecord> {
  const inserted = await db('souls')
    .insert({
      sid: input.sid,
      transport: 'ssh',
      covens: input.covens,
      status: 'pending',
      ssh: JSON.stringify(input.ssh),
      created_at: now,
      updated_at: now,
    })
    .onConflict('sid')
    .ignore()
    .returning('sid');
  if (inserted.length === 0) throw new RepoConflict('duplicate', `soul ${input.sid} is already registered`);
  return (await selectSouls(db).where('s.sid', input.sid).first()) as SoulRecord;
}

/**
 * A successful SSH contact: the facts it read, the host key it saw (recorded only when none is
 * pinned yet, i.e. trust on first use), the error cleared. A pending soul becomes `disconnected`:
 * known and reachable on demand, with no stream held.
 */
export async function recordSshContact(
  db: Knex,
  sid: string,
  soulprint: Record<string, unknown>,
  seenHostKey: string | null,
  now = new Date(),
): Promise<void> {
  await db('souls')
    .where({ sid, transport: 'ssh' })
    .update({
      soulprint: soulprint as never,
      last_contact_at: now,
      last_error: null,
      last_seen_at: now,
      updated_at: now,
      onboarded_at: db.raw('coalesce(onboarded_at, ?)', [now]),
      status: db.raw(`case when status = 'pending' then 'disconnected' else status end`),
      ...(seenHostKey === null
        ? {}
        : {
            ssh: db.raw(
              `case when ssh->>'host_key' is null then jsonb_set(ssh, '{host_key}', to_jsonb(?::text)) else ssh end`,
              [seenHostKey],
            ),
          }),
    });
}

/**
 * Trust on first use: pins `seenHostKey` when none is pinned yet, and answers the key pinned now
 * (null when the soul is gone). Called as soon as the key exchange and authentication succeeded,
 * before any command runs, so a contact that fails later (a wrong FQDN, a failing command, a missing
 * soul) still pins the key it saw and a later different key is refused. A pinned key is never
 * replaced: of two first contacts at once, the second learns the first one's key.
 */
export async function pinSshHostKey(
  db: Knex,
  sid: string,
  seenHostKey: string,
  now = new Date(),
): Promise<string | null> {
  await db('souls')
    .where({ sid, transport: 'ssh' })
    .whereRaw(`ssh->>'host_key' is null`)
    .update({
      ssh: db.raw(`jsonb_set(ssh, '{host_key}', to_jsonb(?::text))`, [seenHostKey]),
      updated_at: now,
    });
  const row = (await db('souls').where({ sid, transport: 'ssh' }).first(db.raw(`ssh->>'host_key' as host_key`))) as
    | { host_key: string | null }
    | undefined;
  return row?.host_key ?? null;
}

/** A failed SSH contact: the reason, shown by the registry until the next success. */
export async function recordSshError(db: Knex, sid: string, reason: string, now = new Date()): Promise<void> {
  await db('souls')
    .where({ sid, transport: 'ssh' })
    .update({ last_error: reason.slice(0, 2000), updated_at: now });
}

/** The SSH souls among `sids`, with their settings; a revoked one is left out (the keeper no longer reaches it). */
export async function sshSouls(db: Knex, sids: readonly string[]): Promise<Map<string, SshSettings>> {
  if (sids.length === 0) return new Map();
  const rows = (await db('souls')
    .select('sid', 'ssh')
    .where({ transport: 'ssh' })
    .whereNot('status', 'revoked')
    .whereIn('sid', sids as string[])) as { sid: string; ssh: SshSettings }[];
  return new Map(rows.map((r) => [r.sid, r.ssh]));
}

export async function getSoul(db: Knex, sid: string): Promise<SoulRecord | undefined> {
  return (await selectSouls(db).where('s.sid', sid).first()) as SoulRecord | undefined;
}

/** Several souls by SID in one statement; an unregistered SID is absent from the map. */
export async function getSouls(db: Knex, sids: readonly string[]): Promise<Map<string, SoulRecord>> {
  const rows = (await selectSouls(db).whereIn('s.sid', sids as string[])) as SoulRecord[];
  return new Map(rows.map((r) => [r.sid, r]));
}

/** Souls ordered by SID, optionally only those carrying a coven and/or in a status. */
export function listSouls(db: Knex, filter: SoulFilter, page: PageRequest): Promise<Page<SoulRecord>> {
  const q = applyFilter(selectSouls(db), filter);
  if (filter.status !== undefined) q.where('s.status', filter.status);
  return fetchPage<SoulRecord>(q, 's.sid', page, (r) => r.sid);
}

/** Snapshot after `soul init`: the certificate the soul now holds. Returns false for an unknown SID. */
export async function markOnboarded(
  db: Knex,
  sid: string,
  certSerial: string,
  now = new Date(),
  certNotAfter: Date | null = null,
): Promise<boolean> {
  // The new certificate replaces the old one and any rotation's pending one (only its serial is
  // admitted at the event stream); a revoked soul onboarded again is a soul like any other, not connected yet.
  const n = await db('souls')
    .where({ sid })
    .update({
      cert_serial: certSerial,
      cert_not_after: certNotAfter,
      cert_serial_pending: null,
      cert_pending_not_after: null,
      onboarded_at: now,
      updated_at: now,
      revoked_at: null,
      status: db.raw(`case when status = 'revoked' then 'disconnected' else status end`),
    });
  return n > 0;
}

/** Snapshot when a keeper (`kid`) holds the soul's stream. Returns false for an unknown SID. */
export async function markConnected(
  db: Knex,
  sid: string,
  kid: string,
  soulprint: Record<string, unknown> | null,
  now = new Date(),
): Promise<boolean> {
  const n = await db('souls')
    .where({ sid })
    .whereNot('status', 'revoked')
    .update({ status: 'connected', connected_kid: kid, soulprint, last_seen_at: now, updated_at: now });
  return n > 0;
}

/**
 * Snapshot when the stream is lost. With `kid`, only the keeper that recorded the connection may
 * mark it lost, so a late disconnect from an old keeper cannot hide a newer connection elsewhere.
 */
export async function markDisconnected(
  db: Knex,
  sid: string,
  opts: { kid?: string; now?: Date } = {},
): Promise<boolean> {
  const now = opts.now ?? new Date();
  const q = db('souls').where({ sid, status: 'connected' });
  if (opts.kid !== undefined) q.where({ connected_kid: opts.kid });
  const n = await q.update({ status: 'disconnected', last_seen_at: now, updated_at: now });
  return n > 0;
}

/**
 * Revokes a soul: status `revoked`, no keeper, every unused bootstrap token retired. Its certificate
 * is refused at the event stream from now on (hub/admission.ts). Returns the record, or undefined
 * for an unknown SID.
 */
export async function revokeSoul(db: Knex, sid: string, now = new Date()): Promise<SoulRecord | undefined> {
  const n = await db.transaction(async (trx) => {
    const changed = await trx('souls')
      .where({ sid })
      .update({ status: 'revoked', revoked_at: now, connected_kid: null, presence_epoch: null, updated_at: now });
    await trx('bootstrap_tokens').where({ sid }).whereNull('used_at').update({ used_at: now, used_reason: 'revoked' });
    return changed;
  });
  if (n === 0) return undefined;
  return (await getSouls(db, [sid])).get(sid);
}

/** Deletes a soul's record and tokens (its certificate is then refused as unregistered). */
export async function deleteSoul(db: Knex, sid: string): Promise<boolean> {
  return db.transaction(async (trx) => {
    await trx('bootstrap_tokens').where({ sid }).delete();
    return (await trx('souls').where({ sid }).delete()) > 0;
  });
}
