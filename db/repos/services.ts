// The service catalog (interface spec 2.3). A service's version is its git ref; there is no separate
// version field. Names are unique: registering a taken name is a conflict, never an overwrite.
import type { Knex } from 'knex';
import { RepoConflict, RepoNotFound, isUniqueViolation } from './errors';
import { fetchPage, type Page, type PageRequest } from './page';

export interface ServiceRecord {
  name: string;
  git: string;
  ref: string;
  /** `secretstore:<path>#<field>`: where the clone's credential lives; the credential itself is stored nowhere here. */
  credential_ref: string | null;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = ['name', 'git', 'ref', 'credential_ref', 'created_by', 'created_at', 'updated_at'];

export async function createService(
  db: Knex,
  input: { name: string; git: string; ref: string; credentialRef?: string; createdBy?: string },
): Promise<ServiceRecord> {
  try {
    const [row] = await db('services')
      .insert({
        name: input.name,
        git: input.git,
        ref: input.ref,
        credential_ref: input.credentialRef ?? null,
        created_by: input.createdBy ?? null,
      })
      .returning(COLUMNS);
    return row as ServiceRecord;
  } catch (err) {
    if (isUniqueViolation(err)) throw new RepoConflict('duplicate', `service ${input.name} is already registered`);
    throw err;
  }
}

export async function getService(db: Knex, name: string): Promise<ServiceRecord | undefined> {
  return (await db('services').select(COLUMNS).where({ name }).first()) as ServiceRecord | undefined;
}

export function listServices(db: Knex, page: PageRequest): Promise<Page<ServiceRecord>> {
  return fetchPage<ServiceRecord>(db('services').select(COLUMNS), 'name', page, (r) => r.name);
}

/** Every registered source, for a keeper's reachability check (runs/source-reach.ts); by name. */
export async function serviceSources(
  db: Knex,
): Promise<Pick<ServiceRecord, 'name' | 'git' | 'ref' | 'credential_ref'>[]> {
  return db('services').select('name', 'git', 'ref', 'credential_ref').orderBy('name');
}

/** How many users of a service a refusal names; the count says how many there are. */
const MAX_NAMED = 20;

/**
 * Removes a service and its published versions, unless an incarnation uses it: then a conflict
 * naming them. The service's row is locked first, which a concurrent create of an incarnation of it
 * (its foreign key check) waits for, so no incarnation can appear between the check and the delete.
 * Deleted incarnations do not count: their records name the service as text, and stay readable.
 */
export async function deleteService(db: Knex, name: string): Promise<void> {
  await db.transaction(async (trx) => {
    const row = await trx('services').select('name').where({ name }).forUpdate().first();
    if (!row) throw new RepoNotFound(`service ${name} is not in the catalog`);
    const users = (await trx('incarnations').select('name').where({ service: name }).orderBy('name')) as {
      name: string;
    }[];
    if (users.length > 0) {
      const listed = users
        .slice(0, MAX_NAMED)
        .map((u) => u.name)
        .join(', ');
      const more = users.length > MAX_NAMED ? ` and ${users.length - MAX_NAMED} more` : '';
      throw new RepoConflict(
        'in-use',
        `service ${name} is used by ${users.length} incarnation(s): ${listed}${more}; ` +
          'delete them first (keeperctl incarnations delete <name>)',
      );
    }
    await trx('services').where({ name }).delete();
  });
}
