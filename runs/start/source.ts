// What a service's repository must be before the catalog takes it (issue 17 item 6): reachable, the
// ref resolvable, and its content clean by soul-lint. Checked at registration and at publishing
// with the same loader runs use; a refusal is `unprocessable` with the reason, and nothing is stored.
// Also where a run finds what it applies: its incarnation, its service, and the published version, pinned.
import type { Knex } from 'knex';
import { getIncarnation, lastTombstone, type IncarnationRecord } from '../../db/repos/incarnations';
import { getService, type ServiceRecord } from '../../db/repos/services';
import { getVersion, latestVersions, publishVersion, type ServiceVersionRecord } from '../../db/repos/service-versions';
import { displayGitUrl } from '../../scenario/load/git-policy';
import { loadSerialized } from './checks';
import type { RunServiceDeps } from './context';
import { refuse } from './outcome';

/** At most this many lint findings are listed in a refusal; the count says how many there were. */
const MAX_LISTED = 20;

type Source = Pick<ServiceRecord, 'name' | 'git' | 'credential_ref'>;

/** git's summarized failures (scenario/load/git.ts) that are about the repository URL, not the ref. */
const REPOSITORY_PROBLEM =
  /the repository was not found|the repository host could not be reached|answered with a redirect|transport is not allowed/;

/**
 * Loads `ref` and lints it; 422 naming `field` when the ref or the content is not usable, and
 * `gitField` (when the request carried the URL, as a registration does) when the repository itself
 * cannot be found or reached: the URL is what to fix then.
 */
export async function checkedLoad(
  deps: RunServiceDeps,
  service: Source,
  ref: string,
  field: string,
  gitField?: string,
) {
  let loaded;
  try {
    loaded = await loadSerialized(deps, { ...service, ref }, ref);
  } catch (err) {
    const why = (err as Error).message;
    const path = gitField !== undefined && REPOSITORY_PROBLEM.test(why) ? gitField : field;
    throw refuse.unprocessable(
      `service ${service.name} cannot be loaded from ${displayGitUrl(service.git)}@${ref}: ${why}`,
      [{ path, message: why }],
    );
  }
  const errors = loaded.errors ?? [];
  if (errors.length > 0) {
    const listed = errors.slice(0, MAX_LISTED).map((e) => `${e.file}:${e.line}:${e.col} ${e.rule}: ${e.message}`);
    throw refuse.unprocessable(
      `service ${service.name}@${ref} (commit ${loaded.commit.slice(0, 12)}) fails soul-lint with ${errors.length} error(s): ${listed.join('; ')}`,
      listed.map((message) => ({ path: field, message })),
    );
  }
  return loaded;
}

/** Resolves, checks and pins `ref` as a published version of the service. */
export async function publishChecked(
  deps: RunServiceDeps,
  db: Knex | Knex.Transaction,
  service: Source,
  ref: string,
  field: string,
  by?: string,
): Promise<ServiceVersionRecord> {
  const loaded = await checkedLoad(deps, service, ref, field);
  return publishVersion(db, {
    service: service.name,
    version: ref,
    commit: loaded.commit,
    stateSchemaVersion: loaded.stateSchemaVersion,
    publishedBy: by,
  });
}

/**
 * A yanked version may keep running where it runs, but nothing new starts on it: a create, a plan of
 * one, an upgrade to it (409 naming the yank, its reason and what to do).
 */
export function refuseYanked(v: ServiceVersionRecord, field: string): void {
  if (!v.yanked_at) return;
  throw refuse.conflict(
    `version ${v.version} of service ${v.service} was yanked at ${v.yanked_at.toISOString()} by ${v.yanked_by ?? 'unknown'}: ${v.yank_reason ?? ''}; ` +
      `choose another ${field} (keeperctl services versions ${v.service})`,
  );
}

/**
 * The version a run applies and its pinned commit: `wanted` (the incarnation's, or the one a create
 * or upgrade names), else the service's newest published version. A service registered before
 * versions existed has none: its catalog ref is published (pinned) on first use, once.
 */
export async function versionToApply(
  deps: RunServiceDeps,
  service: ServiceRecord,
  wanted: string | null | undefined,
  field: string,
  opts: { mustExist?: boolean; notYanked?: boolean } = {},
): Promise<ServiceVersionRecord> {
  const db = deps.db;
  const name = wanted ?? (await latestVersions(db, [service.name])).get(service.name)?.version ?? service.ref;
  const found = await getVersion(db, service.name, name);
  if (found) {
    if (opts.notYanked) refuseYanked(found, field);
    return found;
  }
  if (opts.mustExist) {
    throw refuse.invalid(
      `version ${name} of service ${service.name} is not published: publish it with POST /v1/services/${service.name}/versions {"ref": "${name}"}`,
      [{ path: field, message: 'not a published version' }],
    );
  }
  try {
    return await publishChecked(deps, db, service, name, field);
  } catch (err) {
    // Two first uses at once: the other one pinned it.
    const again = await getVersion(db, service.name, name);
    if (again) return again;
    throw err;
  }
}

export async function mustIncarnation(deps: RunServiceDeps, name: string): Promise<IncarnationRecord> {
  const inc = await getIncarnation(deps.db, name);
  if (inc) return inc;
  const gone = await lastTombstone(deps.db, name);
  if (gone) {
    throw refuse.notFound(
      `incarnation ${name} was deleted at ${gone.deleted_at.toISOString()}` +
        `${gone.forced ? ' (with force)' : gone.deleted_apply_id ? ` by run ${gone.deleted_apply_id}` : ''}; its history stays at /v1/incarnations/${name}/history`,
    );
  }
  throw refuse.notFound(`incarnation ${name} does not exist`);
}

/** What a run records about the version it applies: the ref (service_ref) and its pinned commit. */
export const pinned = (v: ServiceVersionRecord) => ({ serviceRef: v.version, serviceCommit: v.commit });

export async function serviceOf(deps: RunServiceDeps, name: string) {
  const service = await getService(deps.db, name);
  if (!service)
    throw refuse.invalid(`service ${name} is not in the catalog; register it with POST /v1/services`, [
      { path: '/body/service', message: 'unknown service' },
    ]);
  return service;
}
