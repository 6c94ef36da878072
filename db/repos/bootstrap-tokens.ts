// One-time bootstrap tokens (interface spec 2.2, 3.3; ARCHITECTURE 4). A token is 32 random bytes,
// shown once in plaintext and stored only as its SHA-256. Looking a token up by its hash means the
// database never compares a secret, so no timing of that comparison can leak it. The partial unique
// index "one active token per sid" backs the at-most-one rule; the row lock on the soul serializes
// concurrent issues for one host so a forced reissue never fails on that index.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Knex } from 'knex';
import { RepoConflict, RepoNotFound } from './errors';
import { inTransaction } from './page';

export const BOOTSTRAP_TOKEN_PREFIX = 'kbt_';
const TOKEN_SHAPE = /^kbt_[A-Za-z0-9_-]{43}$/;

/** Why a token row stopped being active: spent by `soul init`, replaced by a forced reissue, or timed out. */
export type UsedReason = 'spent' | 'superseded' | 'expired' | 'revoked';

export type SpendResult =
  | { ok: true; sid: string; covens: string[] }
  | { ok: false; reason: 'invalid' | 'expired' | 'used' };

export function hashBootstrapToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

function newToken(): string {
  return BOOTSTRAP_TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

/**
 * Issues a new token for a registered soul. Without `force`, an active token makes it throw
 * RepoConflict('active-token'); with `force`, the active token is marked used ('superseded').
 * An unused token past its expiry never blocks: it is marked used with reason 'expired'.
 * Throws RepoNotFound when the soul does not exist. Joins the caller's transaction if given one.
 */
export function issueBootstrapToken(
  db: Knex | Knex.Transaction,
  sid: string,
  opts: { force: boolean; ttlMs: number; now?: Date },
): Promise<{ token: string; expiresAt: Date }> {
  const now = opts.now ?? new Date();
  return inTransaction(db, async (trx) => {
    const soul = (await trx('souls')
      .select('sid', 'status', 'onboarded_at', 'transport')
      .where({ sid })
      .forUpdate()
      .first()) as { sid: string; status: string; onboarded_at: Date | null; transport: string } | undefined;
    if (!soul) throw new RepoNotFound(`soul ${sid} is not registered`);
    // An SSH host is reached with the key its registration names; a token could only onboard an
    // agent beside it under the same SID. Not even `force` makes one (docs/ssh.md).
    if (soul.transport === 'ssh') {
      throw new RepoConflict(
        'ssh-transport',
        `soul ${sid} uses transport ssh: it has no bootstrap token and no agent to onboard; ` +
          'to run the agent on this host instead, delete the soul and register it again with transport agent',
      );
    }
    // A token for a soul that already holds a certificate (or was revoked) onboards it anew and
    // replaces its identity: only on purpose.
    if (!opts.force && (soul.status === 'revoked' || soul.onboarded_at !== null)) {
      throw new RepoConflict(
        'onboarded',
        soul.status === 'revoked'
          ? `soul ${sid} is revoked; issue a token with force to onboard it again (its old certificate stays refused)`
          : `soul ${sid} is already onboarded; issue a token with force to onboard it again with a new identity`,
      );
    }
    await trx('bootstrap_tokens')
      .where({ sid })
      .whereNull('used_at')
      .where('expires_at', '<=', now)
      .update({ used_at: now, used_reason: 'expired' satisfies UsedReason });
    const active = (await trx('bootstrap_tokens')
      .select('id', 'expires_at')
      .where({ sid })
      .whereNull('used_at')
      .first()) as { id: string; expires_at: Date } | undefined;
    if (active) {
      if (!opts.force) {
        throw new RepoConflict(
          'active-token',
          `soul ${sid} has an active bootstrap token (valid until ${active.expires_at.toISOString()}); ` +
            'issue with force to mark it used and get a new one',
        );
      }
      await trx('bootstrap_tokens')
        .where({ id: active.id })
        .update({ used_at: now, used_reason: 'superseded' satisfies UsedReason });
    }
    const token = newToken();
    const expiresAt = new Date(now.getTime() + opts.ttlMs);
    await trx('bootstrap_tokens').insert({
      sid,
      token_hash: hashBootstrapToken(token),
      created_at: now,
      expires_at: expiresAt,
    });
    return { token, expiresAt };
  });
}

/**
 * Spends a token for `soul init`: a single conditional UPDATE, so of many concurrent spends of one
 * token exactly one sees the row still unused and wins. Returns the soul's SID and covens on success.
 */
export async function spendBootstrapToken(db: Knex, token: string, opts: { now?: Date } = {}): Promise<SpendResult> {
  if (typeof token !== 'string' || !TOKEN_SHAPE.test(token)) return { ok: false, reason: 'invalid' };
  const now = opts.now ?? new Date();
  const hash = hashBootstrapToken(token);
  const spent = (await db.raw(
    `update bootstrap_tokens bt set used_at = ?, used_reason = 'spent'
       from souls s
      where bt.token_hash = ? and bt.used_at is null and bt.expires_at > ? and s.sid = bt.sid
      returning bt.sid, bt.token_hash, s.covens`,
    [now, hash, now],
  )) as { rows: { sid: string; token_hash: Buffer; covens: string[] }[] };
  const row = spent.rows[0];
  // The lookup was by hash; this comparison only guards against a row that is not the one asked for.
  if (row && row.token_hash.length === hash.length && timingSafeEqual(row.token_hash, hash)) {
    return { ok: true, sid: row.sid, covens: row.covens };
  }
  const found = (await db('bootstrap_tokens')
    .select('id', 'used_at', 'used_reason', 'expires_at')
    .where({ token_hash: hash })
    .first()) as { id: string; used_at: Date | null; used_reason: UsedReason | null; expires_at: Date } | undefined;
  if (!found) return { ok: false, reason: 'invalid' };
  if (found.used_at !== null) return { ok: false, reason: found.used_reason === 'expired' ? 'expired' : 'used' };
  await db('bootstrap_tokens')
    .where({ id: found.id })
    .whereNull('used_at')
    .update({ used_at: now, used_reason: 'expired' satisfies UsedReason });
  return { ok: false, reason: 'expired' };
}
