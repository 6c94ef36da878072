// A plan's staleness by facts (docs/plans.md "Apply exactly the plan"): for every host of a plan (or
// of a run that adopted one), the facts its render read (run_plans.reads) against the soul's facts
// now. Checked for all hosts at once, before anything is sent to any of them, so a plan stale on
// one host changes no host at all.
import type { Knex } from 'knex';
import { factsDrift } from '../../scenario/render/reads';
import { getSouls } from './souls';

export interface StaleHost {
  sid: string;
  /** One clause per fact that differs: `fact hostname: the plan rendered with "a", now "b"`. */
  drift: string[];
}

/** The hosts of `applyId`'s stored render whose read facts changed, in SID order; [] when none. */
export async function staleFacts(db: Knex, applyId: string): Promise<StaleHost[]> {
  const rows = (await db('run_plans')
    .select('sid', 'soulprint', 'reads')
    .where({ apply_id: applyId })
    .orderBy('sid')) as {
    sid: string;
    soulprint: Record<string, unknown> | null;
    reads: { facts?: string[] } | null;
  }[];
  if (rows.length === 0) return [];
  const souls = await getSouls(
    db,
    rows.map((r) => r.sid),
  );
  const out: StaleHost[] = [];
  for (const r of rows) {
    const soul = souls.get(r.sid);
    // Render saw the registry's covens as `soulprint.self.covens` (runs/activities/render.ts).
    const now = soul ? { ...(soul.soulprint ?? {}), covens: soul.covens } : null;
    const drift = factsDrift(r.soulprint, now, r.reads?.facts ?? null);
    if (drift.length > 0) out.push({ sid: r.sid, drift });
  }
  return out;
}

/** The stale hosts in words, at most five named: `host a: fact x: ...; host b: ...`. */
export function staleText(stale: StaleHost[]): string {
  const named = stale.slice(0, 5).map((h) => `host ${h.sid}: ${h.drift.join(', ')}`);
  return `${named.join('; ')}${stale.length > 5 ? `; and ${stale.length - 5} more host(s)` : ''}`;
}
