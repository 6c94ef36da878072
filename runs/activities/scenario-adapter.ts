// Binds the ScenarioPort to the scenario engine (scenario/index.ts). The engine is imported, typed:
// its plan's step (PlanStep) is the step the run stores and dispatches, as it is; this file only
// reshapes the engine's service and plan into what the activities and the API read.
import {
  applyMigrations,
  checkRunInput,
  evaluateExpression,
  loadServiceFromGit,
  render,
  renderWithSecrets,
  type LoadedService as EngineService,
  type RenderPlan,
} from '../../scenario';
import type { LoadedService, OperationInfo, RenderResult, ScenarioPort } from './scenario-port';

/** The operations of a service with their declared inputs, as the API shows a version. */
function operationsOf(service: EngineService): { operations: OperationInfo[]; secretInputs: Record<string, string[]> } {
  const secretInputs: Record<string, string[]> = {};
  const operations: OperationInfo[] = [];
  for (const [op, s] of service.scenarios) {
    const inputs = [...s.inputs.values()];
    secretInputs[op] = inputs.filter((d) => d.secret === true).map((d) => d.name);
    operations.push({
      name: op,
      inputs: inputs.map((d) => ({
        name: d.name,
        type: String(d.type ?? 'any'),
        required: !d.hasDefault,
        secret: d.secret === true,
        // A secret input's default is never shown (it may be a value, not a reference).
        ...(d.hasDefault && d.secret !== true ? { default: d.default } : {}),
        ...(d.schema ? { schema: d.schema } : {}),
      })),
    });
  }
  operations.sort((a, b) => a.name.localeCompare(b.name));
  return { operations, secretInputs };
}

function toPlan(plan: RenderPlan): RenderResult {
  return {
    ok: true,
    plan: {
      // The engine applied the scenario's `on:`/`where:` (excluded hosts are not in plan.hosts) and
      // kept every step of each host, the left-out ones marked `skip`.
      hosts: plan.hosts.map((h) => ({
        sid: h.sid,
        steps: h.steps,
        reads: h.reads,
        ...(h.input ? { input: h.input } : {}),
      })),
      input: plan.input,
      excluded: plan.orchestration.excluded,
      orchestration: {
        ...(plan.orchestration.serial === null ? {} : { serial: plan.orchestration.serial }),
        budget: plan.orchestration.budget,
        ...(plan.orchestration.gate ? { gate: plan.orchestration.gate } : {}),
      },
      batches: plan.orchestration.batches,
      // nextState is the state with state_changes.sets applied (dotted keys included): merging it is the commit.
      stateSets: plan.nextState,
    },
  };
}

export function defaultScenarioPort(): ScenarioPort {
  return {
    async loadService(a) {
      // The keeper's wrapper (runs/git-access.ts) adds the source policy; without it nothing is cloned.
      const { policy, ...src } = a;
      if (!policy) throw new Error('no git source policy for this load (wrap the port with withGitSources)');
      const { commit, service } = await loadServiceFromGit({ ...src, policy });
      return {
        commit,
        name: service.name,
        stateSchemaVersion: service.stateSchemaVersion,
        service,
        ...operationsOf(service),
        secretPrefixes: service.secretPrefixes ?? [],
        errors: service.errors,
      } satisfies LoadedService;
    },
    async render(a) {
      const req = {
        service: a.service.service,
        operation: a.operation,
        input: a.input,
        state: a.state,
        hosts: a.hosts,
      };
      const r = a.secrets ? renderWithSecrets({ ...req, secrets: a.secrets }) : render(req);
      return r.ok ? toPlan(r.plan) : { ok: false, errors: r.errors };
    },
    checkRun(a) {
      const r = checkRunInput(a.service.service, a.operation, a.input);
      if (!r.operation) {
        const ops = [...a.service.service.scenarios.keys()].join(', ');
        return [
          {
            path: '/body/operation',
            message: `service ${a.service.name} has no operation "${a.operation}" (scenario/${a.operation}/main.yml); use one of: ${ops}`,
          },
        ];
      }
      // A JSON pointer into the body: /body/input/upstreams/2/port (~ and / escaped as RFC 6901 says).
      return r.problems.map((p) => ({
        path: `/body/input/${(p.at ?? [p.name]).map((k) => String(k).replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`,
        message: p.message,
      }));
    },
    evaluate: (src, context) => evaluateExpression(src, context),
    async migrate(a) {
      const out = applyMigrations(a.service.service, a.state, a.fromVersion, a.toVersion);
      if (!out.ok)
        throw new Error(out.errors.map((e) => `${e.file}:${e.line}:${e.col} ${e.rule}: ${e.message}`).join('; '));
      return out.state;
    },
  };
}
