// The operator registry (interface spec 2.1). The API reads an operator's role from here on every
// request, so deleting a row or changing a role takes effect at once, whatever the token says.
import type { Knex } from 'knex';
import { RepoConflict, isUniqueViolation } from './errors';
import { fetchPage, type Page, type PageRequest } from './page';

export interface ArchonRecord { aid: string; role: string; created_by: string | null; created_at: Date; tokens_valid_after: Date | null }

const COLUMNS = ['aid', 'role', 'created_by', 'created_at', 'tokens_valid_after'];

export async function createArchon(db: Knex, input: { aid: string; role: string; createdBy?: string }): Promise<ArchonRecord> {
  try {
    const [row] = await db('archons').insert({ aid: input.aid, role: input.role, created_by: input.createdBy ?? null }).returning(COLUMNS);
    return row as ArchonRecord;
  } catch (err) {
    if (isUniqueViolation(err)) throw new RepoConflict('duplicate', `operator ${input.aid} already exists`);
    throw err;
  }
}

export async function getArchon(db: Knex, aid: string): Promise<ArchonRecord | undefined> {
  return (await db('archons').select(COLUMNS).where({ aid }).first()) as ArchonRecord | undefined;
}

export function listArchons(db: Knex, page: PageRequest): Promise<Page<ArchonRecord>> {
  return fetchPage<ArchonRecord>(db('archons').select(COLUMNS), 'aid', page, (r) => r.aid);
}

/**
 * The role of an operator, or undefined when the operator does not exist (any more). Runs on every
 * API request, so it is one fixed statement (no query builder) on the primary key.
 */
export async function getArchonRole(db: Knex, aid: string): Promise<string | undefined> {
  const { rows } = (await db.raw('select role from archons where aid = ?', [aid])) as { rows: { role: string }[] };
  return rows[0]?.role;
}

/** What a request needs of its operator: the role and since when its tokens are valid (null: never revoked). */
export interface ArchonAccess { role: string; tokensValidAfter: Date | null }

/**
 * The access of several operators in one statement, read on every request (no cache), so a
 * revocation or removal written by any keeper is in force at every keeper from the next request on.
 * An AID that does not exist is absent from the map.
 */
export async function getArchonAccess(db: Knex, aids: readonly string[]): Promise<Map<string, ArchonAccess>> {
  const { rows } = (await db.raw('select aid, role, tokens_valid_after from archons where aid = any(?)', [aids as string[]])) as
    { rows: { aid: string; role: string; tokens_valid_after: Date | null }[] };
  return new Map(rows.map((r) => [r.aid, { role: r.role, tokensValidAfter: r.tokens_valid_after }]));
}

/**
 * Refuses every token of the operator issued before now; undefined when it does not exist. "Now" is
 * the later of this keeper's clock (which may have issued the tokens) and the database's, so a
 * keeper whose clock runs a little ahead cannot leave a token it just issued valid.
 */
export async function revokeArchonTokens(db: Knex, aid: string, now = new Date()): Promise<ArchonRecord | undefined> {
  const [row] = await db('archons').where({ aid }).update({ tokens_valid_after: db.raw('greatest(now(), ?::timestamptz)', [now.toISOString()]) }).returning(COLUMNS);
  return row as ArchonRecord | undefined;
}

export async function archonRegistryEmpty(db: Knex): Promise<boolean> {
  const { rows } = (await db.raw('select exists (select 1 from archons) as present')) as { rows: { present: boolean }[] };
  return !rows[0].present;
}
