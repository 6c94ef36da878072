// Published versions of a service (interface spec 9.2, issue 17 item 1). A version is a git ref the
// operator published; publishing resolves it to a commit once and pins it, so moving a tag or pushing
// to a branch afterwards changes nothing until that ref is published again under another name and
// an incarnation is upgraded to it. Each version also records the state_schema_version its commit
// expects, which is what upgrades are ordered by (forward only).
import type { Knex } from 'knex';
import { RepoConflict, isUniqueViolation } from './errors';

export interface ServiceVersionRecord {
  service: string; version: string; commit: string; state_schema_version: number;
  published_by: string | null; published_at: Date;
}

export async function publishVersion(db: Knex | Knex.Transaction, v: { service: string; version: string; commit: string; stateSchemaVersion: number; publishedBy?: string }): Promise<ServiceVersionRecord> {
  try {
    const [row] = await db('service_versions').insert({
      service: v.service, version: v.version, commit: v.commit, state_schema_version: v.stateSchemaVersion, published_by: v.publishedBy ?? null,
    }).returning('*');
    return row as ServiceVersionRecord;
  } catch (err) {
    if (isUniqueViolation(err)) throw new RepoConflict('duplicate', `version ${v.version} of service ${v.service} is already published (a published version never changes its commit)`);
    throw err;
  }
}

export async function getVersion(db: Knex | Knex.Transaction, service: string, version: string): Promise<ServiceVersionRecord | undefined> {
  return (await db('service_versions').where({ service, version }).first()) as ServiceVersionRecord | undefined;
}

/** Newest first: the order an operator reads a release list in. */
export async function listVersions(db: Knex, service: string): Promise<ServiceVersionRecord[]> {
  return (await db('service_versions').where({ service }).orderBy([{ column: 'published_at', order: 'desc' }, { column: 'version', order: 'desc' }])) as ServiceVersionRecord[];
}

/** The most recently published version of each of these services. */
export async function latestVersions(db: Knex, services: string[]): Promise<Map<string, ServiceVersionRecord>> {
  if (services.length === 0) return new Map();
  const rows = (await db('service_versions').distinctOn('service').whereIn('service', [...new Set(services)])
    .orderBy([{ column: 'service' }, { column: 'published_at', order: 'desc' }, { column: 'version', order: 'desc' }])) as ServiceVersionRecord[];
  return new Map(rows.map((r) => [r.service, r]));
}
