// The gate activities (docs/runs.md "Gates between batches"): the health check after a batch, and
// the run's record of what it waits for. The check evaluates the scenario's `gate: health:` on every
// host the batch applied to (ok or changed; a failed or unknown host is left to the failure budget),
// with the variables `failed_when` of the last task sees: `input` (with its defaults), `state`,
// every registered result, rebuilt from the host's step rows, and `soulprint.self`, the host's facts
// as reported now (a service that came up reports it after the batch). Only `false`, a type or an
// evaluation error goes back to the workflow: values read from hosts may be secret and histories are
// shown in the Temporal UI.
import type { Knex } from 'knex';
import { incarnationOf } from '../../db/repos/plans';
import { getRun, loadPlans } from '../../db/repos/runs';
import { setRunWaiting } from '../../db/repos/run-waiting';
import { getSouls } from '../../db/repos/souls';
import type { PlanStep } from '../../scenario/render/plan';
import type { GateCheck, RunWaiting } from '../messages';
import { SKIPPED_RESULT } from './apply-host';
import type { SharedActivityDeps } from './deps';
import { RunGone } from './errors';

interface StepResultRow {
  sid: string;
  step_index: number;
  status: string;
  changed: boolean;
  output: string;
}

/** The registered results of one host as its run rows recorded them, as apply-host registered them. */
export function registeredResults(steps: PlanStep[], rows: StepResultRow[]): Record<string, unknown> {
  const byIndex = new Map(rows.map((r) => [r.step_index, r]));
  const out: Record<string, unknown> = {};
  for (const step of steps) {
    if (!step.register) continue;
    const row = byIndex.get(step.index);
    const result =
      !row || row.status === 'skipped'
        ? { ...SKIPPED_RESULT }
        : {
            ok: row.status === 'ok' || row.status === 'changed',
            changed: row.changed,
            failed: row.status === 'failed',
            skipped: false,
            output: row.output,
          };
    if (!step.loop) {
      out[step.register] = result;
      continue;
    }
    const list = Array.isArray(out[step.register]) ? (out[step.register] as unknown[]) : [];
    if (step.loop.length > 0) list[step.loop.index0] = result;
    out[step.register] = list;
  }
  return out;
}

/** What an expression gave, said without its value when it is not a boolean. */
function shown(v: unknown): string {
  if (v === false) return 'false';
  if (v === null || v === undefined) return 'null, not a boolean';
  return `${Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'a map' : `a ${typeof v}`}, not a boolean`;
}

export async function checkGateHealth(
  deps: Pick<SharedActivityDeps, 'db' | 'scenario'>,
  { applyId, sids, health }: { applyId: string; sids: string[]; health: string },
): Promise<GateCheck> {
  const { db } = deps;
  const run = await getRun(db, applyId);
  const inc = run && (await incarnationOf(db, run));
  if (!run || !inc) throw RunGone(applyId);
  const applied = (
    (await db('run_hosts')
      .select('sid')
      .where({ apply_id: applyId })
      .whereIn('sid', sids)
      .whereIn('status', ['ok', 'changed'])
      .orderBy('sid')) as { sid: string }[]
  ).map((r) => r.sid);
  if (applied.length === 0) return { ok: true };
  const plans = await loadPlans(db, applyId, applied);
  const souls = await getSouls(db, applied);
  const rows = (await db('run_steps')
    .select('sid', 'step_index', 'status', 'changed', 'output')
    .where({ apply_id: applyId })
    .whereIn('sid', applied)) as StepResultRow[];
  for (const sid of applied) {
    const plan = plans.get(sid);
    const context = {
      input: plan?.host_input ?? run.rendered_input ?? run.input,
      state: run.plan_upgrade?.state_after ?? inc.state,
      soulprint: { self: { ...(plan?.soulprint ?? {}), ...(souls.get(sid)?.soulprint ?? {}) } },
      ...registeredResults(
        plan?.steps ?? [],
        rows.filter((r) => r.sid === sid),
      ),
    };
    let value: unknown;
    try {
      value = deps.scenario.evaluate(health, context);
    } catch (err) {
      return { ok: false, sid, value: `an error: ${(err as Error).message.slice(0, 300)}` };
    }
    if (value !== true) return { ok: false, sid, value: shown(value) };
  }
  return { ok: true };
}

/** Records (or clears, with null) what the run waits for, since now; only while it is running. */
export async function recordWaiting(db: Knex, applyId: string, waiting: RunWaiting | null): Promise<void> {
  await setRunWaiting(db, applyId, waiting);
}
