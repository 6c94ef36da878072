// Which souls a run targets: one rule, asked by the run service's pre-check (a run that would
// target no host is refused) and by render (the hosts it renders for). Onboarded and not revoked,
// carrying one of the incarnation's covens. A soul registered but never onboarded, or revoked, is
// reported in the run with the reason and never sent a step (docs/runs.md "Which hosts a run targets").
import type { Knex } from 'knex';

export interface TargetSoul {
  sid: string;
  covens: string[];
  soulprint: Record<string, unknown> | null;
}

export const NOT_ONBOARDED = 'registered but not yet onboarded (soul init): not targeted';
export const REVOKED = 'revoked: not targeted (onboard it again to include it)';

/** The souls carrying any of `covens`: those a run targets, and the others with why not. */
export async function runTargets(
  db: Knex,
  covens: string[],
): Promise<{ targets: TargetSoul[]; notTargeted: { sid: string; reason: string }[] }> {
  const rows = (await db('souls')
    .select('sid', 'covens', 'soulprint', 'onboarded_at', 'revoked_at')
    .whereRaw('covens && ?::text[]', [covens])
    .orderBy('sid')) as (TargetSoul & { onboarded_at: Date | null; revoked_at: Date | null })[];
  const targets: TargetSoul[] = [];
  const notTargeted: { sid: string; reason: string }[] = [];
  for (const r of rows) {
    if (r.onboarded_at === null) notTargeted.push({ sid: r.sid, reason: NOT_ONBOARDED });
    else if (r.revoked_at !== null) notTargeted.push({ sid: r.sid, reason: REVOKED });
    else targets.push({ sid: r.sid, covens: r.covens, soulprint: r.soulprint });
  }
  return { targets, notTargeted };
}
