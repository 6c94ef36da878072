// The operator registry (interface spec 2.1). The API reads an operator's role from here on every
// request, so deleting a row or changing a role takes effect at once, whatever the token says.
import type { Knex } from 'knex';
import { RepoConflict, RepoNotFound, isUniqueViolation } from './errors';
import { fetchPage, type Page, type PageRequest } from './page';

export interface ArchonRecord {
  aid: string;
  role: string;
  created_by: string | null;
  created_at: Date;
  tokens_valid_after: Date | null;
}

const COLUMNS = ['aid', 'role', 'created_by', 'created_at', 'tokens_valid_after'];

export async function createArchon(
  db: Knex,
  input: { aid: string; role: string; createdBy?: string },
): Promise<ArchonRecord> {
  try {
    const [row] = await db('archons')
      .insert({ aid: input.aid, role: input.role, created_by: input.createdBy ?? null })
      .returning(COLUMNS);
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

/**
 * What a request needs of its operator: the role, since when its tokens are valid (null: never
 * revoked), and the ids (`jti`) of its tokens revoked one by one.
 */
export interface ArchonAccess {
  role: string;
  tokensValidAfter: Date | null;
  revokedJtis: ReadonlySet<string>;
}

/**
 * The access of several operators in one statement, read on every request (no cache), so a
 * revocation or removal written by any keeper is in force at every keeper from the next request on.
 * An AID that does not exist is absent from the map.
 */
export async function getArchonAccess(db: Knex, aids: readonly string[]): Promise<Map<string, ArchonAccess>> {
  // An operator has few tokens revoked one by one (and rows past keep_until are ignored), so the ids ride along.
  const { rows } = (await db.raw(
    `select a.aid, a.role, a.tokens_valid_after,
            array(select r.jti from revoked_tokens r where r.aid = a.aid and r.keep_until > now()) as revoked_jtis
       from archons a where a.aid = any(?)`,
    [aids as string[]],
  )) as { rows: { aid: string; role: string; tokens_valid_after: Date | null; revoked_jtis: string[] }[] };
  return new Map(
    rows.map((r) => [
      r.aid,
      { role: r.role, tokensValidAfter: r.tokens_valid_after, revokedJtis: new Set(r.revoked_jtis) },
    ]),
  );
}

/**
 * Refuses one token of the operator, by its id, until `keepUntil` (when the longest-lived token the
 * keeper issues would have expired); undefined when the operator does not exist. Revoking an id
 * twice keeps the first revocation. Rows past their keep_until are pruned here: the tokens they
 * named are refused for their age by then.
 */
export async function revokeArchonToken(
  db: Knex,
  aid: string,
  jti: string,
  keepUntil: Date,
): Promise<ArchonRecord | undefined> {
  return db.transaction(async (trx) => {
    const [row] = await trx('archons').where({ aid }).forShare().select(COLUMNS);
    if (!row) return undefined;
    await trx('revoked_tokens').where('keep_until', '<=', trx.fn.now()).delete();
    await trx('revoked_tokens').insert({ jti, aid, keep_until: keepUntil }).onConflict('jti').ignore();
    return row as ArchonRecord;
  });
}

/**
 * Refuses every token of the operator issued before now; undefined when it does not exist. "Now" is
 * the later of this keeper's clock (which may have issued the tokens) and the database's, so a
 * keeper whose clock runs a little ahead cannot leave a token it just issued valid.
 */
export async function revokeArchonTokens(db: Knex, aid: string, now = new Date()): Promise<ArchonRecord | undefined> {
  const [row] = await db('archons')
    .where({ aid })
    .update({ tokens_valid_after: db.raw('greatest(now(), ?::timestamptz)', [now.toISOString()]) })
    .returning(COLUMNS);
  return row as ArchonRecord | undefined;
}

export async function archonRegistryEmpty(db: Knex): Promise<boolean> {
  const { rows } = (await db.raw('select exists (select 1 from archons) as present')) as {
    rows: { present: boolean }[];
  };
  return !rows[0].present;
}

/**
 * The cluster must keep an operator who can manage operators: removing or demoting the last
 * `cluster-admin` is refused. The admins' rows are locked first, so two concurrent removals of the
 * last two admins are serialized and the second one sees the first one's result.
 */
async function underLastAdminRule<T>(
  db: Knex,
  aid: string,
  what: string,
  change: (trx: Knex.Transaction, current: ArchonRecord) => Promise<T>,
): Promise<T> {
  return db.transaction(async (trx) => {
    const admins = (await trx('archons').select('aid').where({ role: ADMIN_ROLE }).forUpdate()) as { aid: string }[];
    const current = (await trx('archons').select(COLUMNS).where({ aid }).forUpdate().first()) as
      | ArchonRecord
      | undefined;
    if (!current) throw new RepoNotFound(`operator ${aid} does not exist`);
    if (current.role === ADMIN_ROLE && admins.length <= 1) {
      throw new RepoConflict(
        'last-admin',
        `operator ${aid} is the last ${ADMIN_ROLE}; ${what} would leave no one able to manage operators: ` +
          `make another operator ${ADMIN_ROLE} first (keeperctl archons role <aid> --role ${ADMIN_ROLE})`,
      );
    }
    return change(trx, current);
  });
}

/** The role that may manage operators, whose last holder cannot be removed or demoted (api/roles.ts CLUSTER_ADMIN). */
const ADMIN_ROLE = 'cluster-admin';

/** Removes an operator; its tokens are refused from then on (the API finds no role for them). */
export async function deleteArchon(db: Knex, aid: string): Promise<ArchonRecord> {
  return underLastAdminRule(db, aid, 'removing it', async (trx, current) => {
    await trx('archons').where({ aid }).delete();
    return current;
  });
}

/** Changes an operator's role; it holds from the operator's next request, whatever its tokens say. */
export async function setArchonRole(db: Knex, aid: string, role: string): Promise<ArchonRecord> {
  const update = async (q: Knex) => {
    const [row] = await q('archons').where({ aid }).update({ role }).returning(COLUMNS);
    if (!row) throw new RepoNotFound(`operator ${aid} does not exist`);
    return row as ArchonRecord;
  };
  // Making someone cluster-admin can never leave the cluster without one.
  if (role === ADMIN_ROLE) return update(db);
  return underLastAdminRule(db, aid, `changing its role to ${role}`, (trx) => update(trx));
}
