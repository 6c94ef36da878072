// The operator registry (interface spec 2.1). The API reads an operator's role from here on every
// request, so deleting a row or changing a role takes effect at once, whatever the token says.
import type { Knex } from 'knex';
import { RepoConflict, isUniqueViolation } from './errors';
import { fetchPage, type Page, type PageRequest } from './page';

export interface ArchonRecord { aid: string; role: string; created_by: string | null; created_at: Date }

const COLUMNS = ['aid', 'role', 'created_by', 'created_at'];

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

/** The roles of several operators in one statement; an AID that does not exist is absent from the map. */
export async function getArchonRoles(db: Knex, aids: readonly string[]): Promise<Map<string, string>> {
  const { rows } = (await db.raw('select aid, role from archons where aid = any(?)', [aids as string[]])) as { rows: { aid: string; role: string }[] };
  return new Map(rows.map((r) => [r.aid, r.role]));
}

export async function archonRegistryEmpty(db: Knex): Promise<boolean> {
  const { rows } = (await db.raw('select exists (select 1 from archons) as present')) as { rows: { present: boolean }[] };
  return !rows[0].present;
}
