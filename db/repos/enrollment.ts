// What the bootstrap listener needs from the token table beyond spending (db/repos/bootstrap-tokens.ts):
// a read-only look at which SID a token was issued for, and putting a spent token back when the
// certificate could not be signed, so a PKI outage does not burn the operator's token.
import type { Knex } from 'knex';
import { hashBootstrapToken } from './bootstrap-tokens';

/** The SID a token was issued for, without spending it or revealing anything else (undefined: unknown token). */
export async function tokenSid(db: Knex, token: string): Promise<string | undefined> {
  const row = (await db('bootstrap_tokens')
    .select('sid')
    .where({ token_hash: hashBootstrapToken(token) })
    .first()) as { sid: string } | undefined;
  return row?.sid;
}

/**
 * Undoes a spend whose certificate was never delivered. Only a token this process just spent, and
 * only while its soul has no other active token (a forced reissue in between wins), so the
 * one-active-token rule holds.
 */
export async function unspendBootstrapToken(db: Knex, token: string): Promise<boolean> {
  const n = await db('bootstrap_tokens as bt')
    .where({ token_hash: hashBootstrapToken(token), used_reason: 'spent' })
    .whereNotExists(function otherActive() {
      this.select(db.raw('1')).from('bootstrap_tokens as o').whereRaw('o.sid = bt.sid').whereNull('o.used_at');
    })
    .update({ used_at: null, used_reason: null });
  return n > 0;
}
