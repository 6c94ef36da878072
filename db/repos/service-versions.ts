// Published versions of a service (interface spec 9.2, issue 17 item 1). A version is a git ref the
// operator published; publishing resolves it to a commit once and pins it, so moving a tag or pushing
// to a branch afterwards changes nothing until that ref is published again under another name and
// an incarnation is upgraded to it. Each version also records the state_schema_version its commit
// expects, which is what upgrades are ordered by (forward only).
import type { Knex } from 'knex';
import { RepoConflict, isUniqueViolation } from './errors';

export interface ServiceVersionRecord {
  service: string;
  version: string;
  commit: string;
  state_schema_version: number;
  published_by: string | null;
  published_at: Date;
  /** Set when the version was yanked (withdrawn): never offered as newer, never chosen for a create or an upgrade. */
  yanked_at: Date | null;
  yanked_by: string | null;
  yank_reason: string | null;
}

export async function publishVersion(
  db: Knex | Knex.Transaction,
  v: { service: string; version: string; commit: string; stateSchemaVersion: number; publishedBy?: string },
): Promise<ServiceVersionRecord> {
  try {
    const [row] = await db('service_versions')
      .insert({
        service: v.service,
        version: v.version,
        commit: v.commit,
        state_schema_version: v.stateSchemaVersion,
        published_by: v.publishedBy ?? null,
      })
      .returning('*');
    return row as ServiceVersionRecord;
  } catch (err) {
    if (isUniqueViolation(err))
      throw new RepoConflict(
        'duplicate',
        `version ${v.version} of service ${v.service} is already published (a published version never changes its commit)`,
      );
    throw err;
  }
}

export async function getVersion(
  db: Knex | Knex.Transaction,
  service: string,
  version: string,
): Promise<ServiceVersionRecord | undefined> {
  return (await db('service_versions').where({ service, version }).first()) as ServiceVersionRecord | undefined;
}

/** Newest first: the order an operator reads a release list in. */
export async function listVersions(db: Knex, service: string): Promise<ServiceVersionRecord[]> {
  return (await db('service_versions')
    .where({ service })
    .orderBy([
      { column: 'published_at', order: 'desc' },
      { column: 'version', order: 'desc' },
    ])) as ServiceVersionRecord[];
}

/** The most recently published version of each of these services that is not yanked. */
export async function latestVersions(db: Knex, services: string[]): Promise<Map<string, ServiceVersionRecord>> {
  if (services.length === 0) return new Map();
  const rows = (await db('service_versions')
    .distinctOn('service')
    .whereIn('service', [...new Set(services)])
    .whereNull('yanked_at')
    .orderBy([
      { column: 'service' },
      { column: 'published_at', order: 'desc' },
      { column: 'version', order: 'desc' },
    ])) as ServiceVersionRecord[];
  return new Map(rows.map((r) => [r.service, r]));
}

/** The given (service, version) pairs' records, keyed `service\u0000version`; a pair not published is absent. */
export async function versionsByPair(
  db: Knex,
  pairs: { service: string; version: string }[],
): Promise<Map<string, ServiceVersionRecord>> {
  if (pairs.length === 0) return new Map();
  const rows = (await db('service_versions').whereIn(
    ['service', 'version'],
    pairs.map((p) => [p.service, p.version]),
  )) as ServiceVersionRecord[];
  return new Map(rows.map((r) => [pairKey(r.service, r.version), r]));
}

export function pairKey(service: string, version: string): string {
  return `${service}\u0000${version}`;
}

/**
 * Yanks a version: a conflict when it is yanked already (the first reason stays), undefined when it
 * is not published. Nothing else changes: incarnations on it keep its pinned commit.
 */
export async function yankVersion(
  db: Knex,
  v: { service: string; version: string; reason: string; by: string },
): Promise<ServiceVersionRecord | undefined> {
  const [row] = await db('service_versions')
    .where({ service: v.service, version: v.version })
    .whereNull('yanked_at')
    .update({ yanked_at: db.fn.now(), yanked_by: v.by, yank_reason: v.reason })
    .returning('*');
  if (row) return row as ServiceVersionRecord;
  const existing = await getVersion(db, v.service, v.version);
  if (existing?.yanked_at) {
    throw new RepoConflict(
      'duplicate',
      `version ${v.version} of service ${v.service} was yanked already at ${existing.yanked_at.toISOString()} by ${existing.yanked_by ?? 'unknown'}: ${existing.yank_reason ?? ''}`,
    );
  }
  return undefined;
}
