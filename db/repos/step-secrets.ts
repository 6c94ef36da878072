// Which files of a host may hold a secret, by the keeper's own records (docs/secrets.md "Diffs and
// hashes"). Each step row carries the path it manages (run_steps.path) and whether its params
// carried a secret (run_steps.secret), written with the row (db/repos/runs.ts recordSteps).
// A path of a host is tainted when a step row of it carried a secret (in a run, whatever its
// outcome, or in a plan: the file held or was to hold one) and no run since wrote non-secret
// content there (a run step of that path without a secret that ended ok or changed: the file
// then held exactly that content). Only an untainted path's old content may be shown.
import type { Knex } from 'knex';

/** The tainted paths of each host among `sids`; hosts with none are absent. */
export async function taintedPaths(db: Knex, sids: string[], paths: string[]): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>();
  if (sids.length === 0 || paths.length === 0) return out;
  const { rows } = (await db.raw(
    `
    select distinct s.sid, s.path from run_steps s join incarnation_runs r on r.apply_id = s.apply_id
    where s.secret and s.sid = any(?) and s.path = any(?)
      and not exists (
        select 1 from run_steps c join incarnation_runs cr on cr.apply_id = c.apply_id
        where c.sid = s.sid and c.path = s.path and not c.secret and cr.kind = 'run' and c.status in ('ok', 'changed')
          and cr.created_at > r.created_at)`,
    [sids, paths],
  )) as { rows: { sid: string; path: string }[] };
  for (const r of rows) (out.get(r.sid) ?? out.set(r.sid, new Set()).get(r.sid)!).add(r.path);
  return out;
}
