// The service catalog (interface spec 2.3). A service's version is its git ref; there is no separate
// version field. Names are unique: registering a taken name is a conflict, never an overwrite.
import type { Knex } from 'knex';
import { RepoConflict, isUniqueViolation } from './errors';
import { fetchPage, type Page, type PageRequest } from './page';

export interface ServiceRecord {
  name: string; git: string; ref: string;
  /** `secretstore:<path>#<field>`: where the clone's credential lives; the credential itself is stored nowhere here. */
  credential_ref: string | null;
  created_by: string | null; created_at: Date; updated_at: Date;
}

const COLUMNS = ['name', 'git', 'ref', 'credential_ref', 'created_by', 'created_at', 'updated_at'];

export async function createService(db: Knex, input: { name: string; git: string; ref: string; credentialRef?: string; createdBy?: string }): Promise<ServiceRecord> {
  try {
    const [row] = await db('services')
      .insert({ name: input.name, git: input.git, ref: input.ref, credential_ref: input.credentialRef ?? null, created_by: input.createdBy ?? null })
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
