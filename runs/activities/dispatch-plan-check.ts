// Apply exactly the plan (docs/plans.md): a run that applies a plan first checks each host again in
// check mode, under the plan's own key (a dry run neither reads nor writes the soul's ledger), and
// refuses the host, sending nothing for real, when what the plan saw there no longer holds
// (runs/activities/plan-drift.ts says what counts as drift).
import type { StepRow } from '../../db/repos/runs';
import type { PlanStep } from '../../scenario/render/plan';
import type { HostOutcome } from './apply-host';
import { factsDrift, stepDrift } from './plan-drift';

export interface PlanCheck {
  applyId: string;
  planId: string;
  sid: string;
  /** The host's rendered plan: its steps, the soulprint render used and the facts it read of it
   *  (null: a plan stored before reads were recorded, every fact counts). */
  plan: { steps: PlanStep[]; soulprint: Record<string, unknown> | null; reads: { facts: string[] } | null };
  /** What the plan's check saw on this host. */
  planned: StepRow[];
  /** The soul's facts now (undefined: no longer registered). */
  soul: { soulprint: Record<string, unknown> | null; covens: unknown } | undefined;
  /** The check made now (applyHost in check mode under the plan's apply_id). */
  checkAgain(): Promise<HostOutcome>;
  /** Facts the render read changed on some host of the plan (this one or another; in words): every
   *  host is refused unchecked, so a stale plan changes no host at all. */
  staleHosts?: string;
}

/** The host refused for drift (every step skipped, the differences in the reason), or undefined when it still matches. */
export async function refuseOnPlanDrift(c: PlanCheck): Promise<HostOutcome | undefined> {
  if (c.staleHosts) return refused(c, `plan ${c.planId} is stale: ${c.staleHosts}; nothing was applied on any host`);
  const again = await c.checkAgain();
  const drift = [
    ...factsDrift(
      c.plan.soulprint,
      c.soul ? { ...(c.soul.soulprint ?? {}), covens: c.soul.covens } : null,
      c.plan.reads?.facts ?? null,
    ),
    ...stepDrift(c.planned, again.steps),
  ];
  if (drift.length === 0) return undefined;
  return refused(c, `drift since plan ${c.planId}: ${drift.join('; ')}; nothing was applied on this host`);
}

function refused(c: PlanCheck, reason: string): HostOutcome {
  const now = new Date();
  return {
    status: 'failed',
    startedAt: now,
    finishedAt: now,
    reason,
    steps: c.plan.steps.map((st) => ({
      apply_id: c.applyId,
      sid: c.sid,
      step_index: st.index,
      name: st.name,
      module: st.module,
      status: 'skipped' as const,
      skip_reason: 'drift' as const,
      changed: false,
      output: 'not run: the host no longer matches the plan',
      attempts: 0,
      replayed: false,
      started_at: null,
      finished_at: null,
    })),
  };
}
