// Applying exactly a plan (docs/plans.md; POST /v1/incarnations/{name}/runs {plan_id}, and drift
// repair). Refused as a conflict before anything is recorded when the plan cannot be applied as it
// was seen: not ready (still checking, or a host failed its check), applied already, expired, or
// stale (another run committed since the plan was made). Otherwise the run is recorded with the
// plan's operation, input and pinned commit, and the plan is claimed in the same transaction that
// takes the lock, so two concurrent applies of one plan start one run. While the converger's run
// holds the incarnation, the run is recorded waiting for it (`waits_for`, as an operator's run) and
// the plan is checked again when its turn comes (db/repos/plan-recheck.ts): a stale plan never
// applies. The run adopts the plan's steps (no new render) and checks each host again before its
// first step. The plan of a create makes the incarnation when it is applied (one transaction: the
// incarnation, the run, the claim). A plan is also stale when a fact its render read has changed on
// any of its hosts (db/repos/plan-facts.ts): every host is compared here, before anything is recorded
// or sent, so such a plan changes no host at all; facts it never read do not count.
import { isDeepStrictEqual } from 'node:util';
import type { Knex } from 'knex';
import { createIncarnation } from '../../db/repos/incarnations';
import { claimPlan } from '../../db/repos/plans';
import { staleFacts, staleText } from '../../db/repos/plan-facts';
import { beginRunOrWait } from '../../db/repos/run-queue';
import { getRun } from '../../db/repos/runs';
import { getVersion } from '../../db/repos/service-versions';
import { newApplyId } from '../apply-id';
import type { RunServiceDeps } from './context';
import { refuse, type RunAccepted } from './outcome';
import { startRun } from './launch';
import { mustIncarnation, refuseYanked } from './source';

export async function applyPlan(deps: RunServiceDeps, name: string, planId: string, by: string): Promise<RunAccepted> {
  const plan = await getRun(deps.db, planId);
  if (!plan || plan.kind !== 'plan' || plan.incarnation !== name)
    throw refuse.notFound(`incarnation ${name} has no plan ${planId}`);
  const again = `make a new plan with POST /v1/incarnations/${name}/plans`;
  const usable = () => {
    if (plan.status === 'running')
      throw refuse.conflict(
        `plan ${planId} is still checking its hosts; wait for it to be ready (GET .../plans/${planId}?wait=30s)`,
      );
    if (plan.status === 'failed')
      throw refuse.conflict(`plan ${planId} cannot be applied: ${plan.error ?? 'it failed'}; ${again}`);
    if (plan.applied_by)
      throw refuse.conflict(`plan ${planId} was applied already by run ${plan.applied_by}; ${again}`);
    if (plan.expires_at && plan.expires_at.getTime() <= Date.now())
      throw refuse.conflict(`plan ${planId} expired at ${plan.expires_at.toISOString()}; ${again}`);
  };
  const factsHold = async () => {
    const stale = await staleFacts(deps.db, planId);
    if (stale.length > 0)
      throw refuse.conflict(
        `plan ${planId} is stale: facts its render read have changed since: ${staleText(stale)}; nothing was applied on any host; ${again}`,
      );
  };
  if (plan.plan_upgrade) {
    throw refuse.conflict(
      `plan ${planId} shows what an upgrade to ${plan.plan_upgrade.version} would do; it is not applied as such: ` +
        `upgrade with POST /v1/incarnations/${name}/upgrade {"version": "${plan.plan_upgrade.version}"} (state only), then plan and apply the operation`,
    );
  }
  const claim = async (trx: Knex.Transaction, applyId: string) => {
    if (!(await claimPlan(trx, planId, applyId)))
      throw refuse.conflict(`plan ${planId} was applied by another run or expired a moment ago; ${again}`);
  };
  if (plan.plan_target) {
    // The plan of a create: applying it creates the incarnation it was made for, with its steps.
    usable();
    await factsHold();
    const t = plan.plan_target;
    // A version yanked since the plan was made starts no new incarnation either.
    const version = t.version ? await getVersion(deps.db, t.service, t.version) : undefined;
    if (version) refuseYanked(version, 'version');
    const applyId = newApplyId(name, plan.operation);
    const run = {
      applyId,
      incarnation: name,
      operation: plan.operation,
      input: plan.input,
      serviceRef: plan.service_ref ?? t.version ?? '',
      ...(plan.service_commit ? { serviceCommit: plan.service_commit } : {}),
      createdBy: by,
      planId,
      service: t.service,
    };
    // The plan sealed its secret inputs under its own id: the incarnation it creates keeps that key.
    await createIncarnation(
      deps.db,
      {
        name,
        service: t.service,
        covens: t.covens,
        ...(t.version ? { version: t.version } : {}),
        createdBy: by,
        secretsKey: planId,
        hostInput: plan.host_input,
      },
      run,
      { within: (trx) => claim(trx, applyId) },
    );
    return startRun(deps, run);
  }
  const inc = await mustIncarnation(deps, name);
  usable();
  if (plan.plan_base !== inc.last_committed_apply_id) {
    throw refuse.conflict(
      `plan ${planId} is stale: it was made on the state of run ${plan.plan_base ?? '(none)'}, and run ${inc.last_committed_apply_id ?? '(none)'} has committed since; ${again}`,
    );
  }
  // The plan rendered with the per-host input of its start; changed since, it shows what would no longer be applied.
  if (!isDeepStrictEqual(plan.host_input ?? null, inc.host_input ?? null)) {
    throw refuse.conflict(
      `plan ${planId} is stale: incarnation ${inc.name}'s per-host input (host_input) changed since the plan was made; ${again}`,
    );
  }
  await factsHold();
  const applyId = newApplyId(inc.name, plan.operation);
  const run = {
    applyId,
    incarnation: inc.name,
    operation: plan.operation,
    input: plan.input,
    serviceRef: plan.service_ref ?? inc.service_version ?? '',
    ...(plan.service_commit ? { serviceCommit: plan.service_commit } : {}),
    createdBy: by,
    planId,
    service: inc.service,
  };
  // Behind the converger's run it waits like an operator's run (db/repos/run-queue.ts), claiming the
  // plan now; when its turn comes the plan is checked again against what that run did (plan-recheck.ts).
  const { waitsFor } = await beginRunOrWait(deps.db, inc.name, run, { within: (trx) => claim(trx, applyId) });
  return startRun(deps, run, waitsFor);
}
