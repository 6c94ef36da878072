// The render phase: everything is resolved for every targeted host before anything is applied
// (ARCHITECTURE 2). Loads the service at its catalog ref, selects the incarnation's hosts (souls
// carrying one of its covens), renders (the engine applies `on:`/`where:`), and stores the plan per host.
// A render error is stored with the run and nothing is sent to any soul. A run that applies a plan
// adopts the plan's render instead (docs/plans.md).
import type { Knex } from 'knex';
import { getRun, saveRender, saveRenderErrors, setPhase } from '../../db/repos/runs';
import { getService } from '../../db/repos/services';
import { adoptPlan, incarnationOf, savePlanUpgrade } from '../../db/repos/plans';
import { runTargets } from '../../db/repos/targets';
import type { RenderOutcome, SerialSpec } from '../messages';
import { displayGitUrl } from '../../scenario/load/git-policy';
import type { SharedActivityDeps } from './deps';
import { RunGone } from './errors';
import { keeperSuffix } from './keeper-errors';
import { renderSecrets } from './render-secrets';
import { schemaMismatch } from '../schema-guard';
import type { RenderError, RunBudget } from './scenario-port';
import type { RunRecord } from '../../db/repos/runs';
import { DESTROY } from '../../db/repos/run-outcome';
import { budgetHosts, parseBudget } from '../../scenario/budget';
import { hostLayer } from '../../scenario/host-input';

interface Host {
  sid: string;
  covens: string[];
  soulprint: Record<string, unknown>;
}

/** The run's hosts by the one targeting rule (db/repos/targets.ts), and the souls it leaves out with why. */
async function targetHosts(
  db: Knex,
  covens: string[],
): Promise<{ hosts: Host[]; left: { sid: string; reason: string }[] }> {
  const { targets, notTargeted } = await runTargets(db, covens);
  // The registry's covens (the operator's labels) are what `on: coven:<name>` and
  // `soulprint.self.covens` see; a soul cannot claim covens through the facts it reports.
  return {
    hosts: targets.map((r) => ({
      sid: r.sid,
      covens: r.covens,
      soulprint: { ...(r.soulprint ?? {}), covens: r.covens },
    })),
    left: notTargeted,
  };
}

export async function renderRun(deps: SharedActivityDeps, applyId: string): Promise<RenderOutcome> {
  const { db, scenario } = deps;
  const run = await getRun(db, applyId);
  if (!run) throw RunGone(applyId);
  const inc = await incarnationOf(db, run);
  if (!inc) throw RunGone(applyId);
  await setPhase(db, applyId, 'rendering');
  // A run that applies a plan renders nothing: it takes the plan's steps as they were checked.
  if (run.plan_id) {
    const adopted = await adoptPlan(db, applyId, run.plan_id);
    return {
      ok: true,
      sids: adopted.sids,
      serial: adopted.serial as SerialSpec,
      ...(adopted.batches ? { batches: adopted.batches } : {}),
      ...(adopted.gate ? { gate: adopted.gate } : {}),
    };
  }
  const fail = async (commit: string | null, errors: RenderError[]): Promise<RenderOutcome> => {
    await saveRenderErrors(db, applyId, commit, errors);
    return { ok: false, errorCount: errors.length, ...(deps.kid ? { kid: deps.kid } : {}) };
  };

  const service = await getService(db, inc.service);
  if (!service)
    return fail(null, [
      { file: 'catalog', line: 0, col: 0, rule: 'service', message: `service ${inc.service} is not in the catalog` },
    ]);
  // The commit the run's version was pinned to when the run was recorded, never what its ref points at now.
  const ref = run.service_commit ?? run.service_ref ?? service.ref;
  let loaded;
  try {
    loaded = await scenario.loadService({
      git: service.git,
      ref,
      cacheDir: deps.cacheDir,
      credentialRef: service.credential_ref ?? undefined,
    });
  } catch (err) {
    return fail(null, [
      {
        file: 'service.yml',
        line: 0,
        col: 0,
        rule: 'load',
        // Which keeper could not load it: keepers may differ in what they reach (issue 33).
        message: `cannot load ${displayGitUrl(service.git)}@${ref}: ${(err as Error).message}${deps.kid ? keeperSuffix(deps.kid) : ''}`,
      },
    ]);
  }
  // The plan of an upgrade renders the new version on the state its migrations would make.
  let state = inc.state;
  if (run.plan_upgrade) {
    const from = inc.state_schema_version ?? 1;
    const to = run.plan_upgrade.to_version;
    try {
      state =
        to === from
          ? inc.state
          : await scenario.migrate({ service: loaded, state: inc.state, fromVersion: from, toVersion: to });
    } catch (err) {
      return fail(loaded.commit, [
        {
          file: 'migrations',
          line: 0,
          col: 0,
          rule: 'migration',
          message: `migration from version ${from} to ${to} failed: ${(err as Error).message}`,
        },
      ]);
    }
    await savePlanUpgrade(db, applyId, {
      ...run.plan_upgrade,
      migrations: Array.from({ length: to - from }, (_, i) => from + i + 1),
      state_before: inc.state,
      state_after: state,
    });
  } else {
    const mismatch = schemaMismatch(inc, run.service_ref ?? ref, loaded);
    if (mismatch)
      return fail(loaded.commit, [
        { file: 'service.yml', line: 0, col: 0, rule: 'state_schema_version', message: mismatch },
      ]);
  }

  const all = await targetHosts(db, inc.covens);
  // A converge run goes to its new soul(s) only (runs/converge.ts); the other hosts are not part of it.
  const only = run.target_sids ? new Set(run.target_sids) : null;
  const hosts = only ? all.hosts.filter((h) => only.has(h.sid)) : all.hosts;
  const left = only ? [] : all.left;
  // Per-host input: the copy the run recorded at its start, layered for each host by its covens.
  const layers = new Map(hosts.map((h) => [h.sid, hostLayer(run.host_input, h, inc.covens)]));
  const rendered = await scenario.render({
    service: loaded,
    operation: run.operation,
    input: run.input,
    state,
    hosts: hosts.map((h) => {
      const layer = layers.get(h.sid);
      return { sid: h.sid, soulprint: h.soulprint, ...(layer ? { input: layer } : {}) };
    }),
    ...(deps.secrets ? { secrets: renderSecrets(deps.secrets, applyId, inc) } : {}),
  });
  if (!rendered.ok) return fail(loaded.commit, rendered.errors);
  const { plan } = rendered;
  const budget = runBudget(run, plan.orchestration.budget, plan.hosts.length);
  // The engine alone decides targets: hosts its `on:`/`where:` left out are in plan.excluded.
  const soulprints = new Map(hosts.map((h) => [h.sid, h.soulprint]));
  const planned = plan.hosts;
  await saveRender(db, applyId, {
    serviceCommit: loaded.commit,
    input: plan.input,
    stateChanges: { sets: plan.stateSets, state_schema_version: loaded.stateSchemaVersion },
    orchestration: { ...plan.orchestration, budget, batches: plan.batches },
    hosts: planned.map((h) => ({
      sid: h.sid,
      steps: h.steps,
      soulprint: soulprints.get(h.sid) ?? null,
      reads: h.reads,
      // The host's own input as rendered (its layer applied), when it differs by a layer.
      hostInput: h.input ?? null,
    })),
    notTargeted: [
      ...plan.excluded.map((e) => ({ sid: e.sid, status: 'skipped' as const, reason: e.reason })),
      // Never onboarded or revoked: `pending` with the reason (a pending host with a reason was never targeted).
      ...left.map((l) => ({ sid: l.sid, status: 'pending' as const, reason: l.reason })),
    ],
  });
  return {
    ok: true,
    sids: planned.map((h) => h.sid),
    serial: plan.orchestration.serial ?? null,
    batches: plan.batches,
    budget,
    ...(plan.orchestration.gate ? { gate: plan.orchestration.gate } : {}),
  };
}

/**
 * The run's failure budget: the scenario's, or the operator's when smaller (the API refused a larger
 * one it could compare; a count against a percentage is compared here, in hosts). A `destroy` has
 * none: a committed destroy removes the incarnation, which would leave its failed hosts behind.
 */
export function runBudget(
  run: Pick<RunRecord, 'operation' | 'max_failed'>,
  scenario: RunBudget | undefined,
  hosts: number,
): RunBudget {
  const base = scenario ?? { maxFailed: 0, countUnknown: true };
  if (run.operation === DESTROY) return { ...base, maxFailed: 0 };
  const asked = run.max_failed === null ? undefined : parseBudget(run.max_failed);
  if (asked === undefined || typeof asked === 'string') return base;
  return { ...base, maxFailed: Math.min(base.maxFailed, budgetHosts(asked, hosts)) };
}
