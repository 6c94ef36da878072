// Which files of a host may hold a secret, and which secrets a host was sent, by the keeper's own
// records (docs/secrets.md "Diffs and hashes", "Output"). One record for runs and executions alike
// (issue 45, H-1): each run step row carries the path it manages (run_steps.path) and whether its
// params carried a secret (run_steps.secret), written with the row (db/repos/runs.ts recordSteps);
// each execution carries the same for its one module (executions.path, executions.secret), and its
// host rows say where it ran.
// A path of a host is tainted when a step or execution of it carried a secret (whatever its outcome,
// or in check mode: the file held or was to hold one) and nothing since wrote non-secret content
// there (a run step, or an execution not in check mode, of that path without a secret that ended
// ok or changed: the file then held exactly that content). Only an untainted path's old content may
// be shown, and a step that may read a tainted path has its output withheld.
import type { Knex } from 'knex';
import type { SecretRef } from '../../common/secret';

/**
 * The tainted paths of each host among `sids`; hosts with none are absent. `paths` narrows the
 * answer to those paths; without it every tainted path of the hosts is answered.
 */
export async function taintedPaths(db: Knex, sids: string[], paths?: string[]): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>();
  if (sids.length === 0 || paths?.length === 0) return out;
  const { rows } = (await db.raw(
    `
    with writes as (
      select s.sid, s.path, s.secret, r.created_at as at, (r.kind = 'run' and s.status in ('ok', 'changed')) as wrote
      from run_steps s join incarnation_runs r on r.apply_id = s.apply_id
      where s.sid = any(:sids) and s.path is not null and (:all or s.path = any(:paths))
      union all
      select h.sid, e.path, e.secret, e.created_at, (not e.dry_run and h.status in ('ok', 'changed'))
      from executions e join execution_hosts h on h.execution_id = e.id
      where h.sid = any(:sids) and e.path is not null and (:all or e.path = any(:paths))
    )
    select distinct w.sid, w.path from writes w
    where w.secret and not exists (
      select 1 from writes c where c.sid = w.sid and c.path = w.path and not c.secret and c.wrote and c.at > w.at)`,
    { sids, paths: paths ?? [], all: paths === undefined },
  )) as { rows: { sid: string; path: string }[] };
  for (const r of rows) (out.get(r.sid) ?? out.set(r.sid, new Set()).get(r.sid)!).add(r.path);
  return out;
}

/** Records that these secrets (store path and field; never a value) were sent to these hosts. */
export async function recordSoulSecrets(db: Knex, sent: Array<{ sid: string; refs: SecretRef[] }>): Promise<void> {
  const rows = sent.flatMap(({ sid, refs }) => refs.map((r) => ({ sid, path: r.path, field: r.field })));
  if (rows.length === 0) return;
  await db.raw(
    `insert into soul_secrets (sid, path, field)
     select r.sid, r.path, r.field from jsonb_to_recordset(?::jsonb) as r(sid text, path text, field text)
     on conflict (sid, path, field) do update set recorded_at = now()`,
    [JSON.stringify(rows)],
  );
}

/** The secrets each host among `sids` was ever sent; hosts with none are absent. */
export async function soulSecretRefs(db: Knex, sids: string[]): Promise<Map<string, SecretRef[]>> {
  const out = new Map<string, SecretRef[]>();
  if (sids.length === 0) return out;
  const rows = (await db('soul_secrets').whereIn('sid', sids).select('sid', 'path', 'field')) as Array<
    SecretRef & { sid: string }
  >;
  for (const r of rows) (out.get(r.sid) ?? out.set(r.sid, []).get(r.sid)!).push({ path: r.path, field: r.field });
  return out;
}

/** A file a secret was written to on a host, by identity (db/migrations/20261129600000_secret_file_identities.ts). */
export interface SecretFile {
  /** The keyed digest of its content, under the host's own key. */
  digest: string;
  /** "<device>:<inode>:<birth time ns>". */
  file_id: string;
  /** The path the secret was written to, for the reason a copy or link is withheld. */
  path: string;
}

/** Records files of `sid` that hold a secret; a file seen again keeps its row with a fresh time. */
export async function recordSecretFiles(db: Knex, sid: string, files: SecretFile[]): Promise<void> {
  if (files.length === 0) return;
  await db.raw(
    `insert into secret_files (sid, digest, file_id, path)
     select ?, f.digest, f.file_id, f.path from jsonb_to_recordset(?::jsonb) as f(digest text, file_id text, path text)
     on conflict (sid, digest, file_id) do update set path = excluded.path, recorded_at = now()`,
    [sid, JSON.stringify(files.map((f) => ({ digest: f.digest, file_id: f.file_id, path: f.path })))],
  );
}

/** The files each host among `sids` holds a secret in, by identity; hosts with none are absent. */
export async function secretFiles(db: Knex, sids: string[]): Promise<Map<string, SecretFile[]>> {
  const out = new Map<string, SecretFile[]>();
  if (sids.length === 0) return out;
  const rows = (await db('secret_files').whereIn('sid', sids).select('sid', 'digest', 'file_id', 'path')) as Array<
    SecretFile & { sid: string }
  >;
  for (const r of rows)
    (out.get(r.sid) ?? out.set(r.sid, []).get(r.sid)!).push({ digest: r.digest, file_id: r.file_id, path: r.path });
  return out;
}
