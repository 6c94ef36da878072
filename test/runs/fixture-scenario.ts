// A stand-in scenario engine for the run tests, behind the same ScenarioPort the keeper uses. The
// real engine (scenario/, issue 5) had not landed when these tests were written; this one keeps the
// tests about what runs do (batches, lock, commit, report, exactly-once) and evaluates apply-time
// expressions with the same CEL library. Services are TypeScript objects named by a fake git URL.
import { evaluate } from '@marcbachmann/cel-js';
import type { PlannedStep } from '../../db/repos/runs';
import type { LoadedService, Orchestration, RenderError, ScenarioPort } from '../../runs/activities/scenario-port';

export interface FixtureOperation {
  (args: { input: Record<string, unknown>; state: Record<string, unknown>; sid: string }):
    { steps: Omit<PlannedStep, 'index'>[]; orchestration?: Orchestration; stateSets?: Record<string, unknown> } | { errors: RenderError[] };
}

export interface FixtureService {
  name: string;
  stateSchemaVersion: number;
  operations: Record<string, FixtureOperation>;
  migrations?: Record<number, (state: Record<string, unknown>) => Record<string, unknown>>;
}

export function fixtureScenario(services: Record<string, FixtureService>): ScenarioPort & { renders: number } {
  const port = {
    renders: 0,
    async loadService({ git, ref }: { git: string; ref: string }): Promise<LoadedService> {
      const s = services[git];
      if (!s) throw new Error(`no fixture service at ${git}`);
      // A pinned commit (what a published version records) loads as itself.
      const commit = ref.startsWith('fixture-') ? ref : `fixture-${s.name}-${ref}`;
      return {
        commit, name: s.name, stateSchemaVersion: s.stateSchemaVersion, service: s,
        operations: Object.keys(s.operations).sort().map((name) => ({ name, inputs: [] })),
      };
    },
    async render({ service, operation, input, state, hosts }: Parameters<ScenarioPort['render']>[0]) {
      port.renders++;
      const s = service.service as FixtureService;
      const op = s.operations[operation];
      if (!op) return { ok: false as const, errors: [{ file: `scenario/${operation}/main.yml`, line: 1, col: 1, rule: 'operation', message: `no scenario ${operation}` }] };
      let orchestration: Orchestration = {};
      let stateSets: Record<string, unknown> = {};
      const out: { sid: string; steps: PlannedStep[] }[] = [];
      for (const h of hosts) {
        const r = op({ input, state, sid: h.sid });
        if ('errors' in r) return { ok: false as const, errors: r.errors };
        orchestration = r.orchestration ?? {};
        stateSets = r.stateSets ?? {};
        out.push({ sid: h.sid, steps: r.steps.map((st, index) => ({ ...st, index })) });
      }
      return { ok: true as const, plan: { hosts: out, input, excluded: [], orchestration, stateSets } };
    },
    checkRun({ service, operation }: Parameters<ScenarioPort['checkRun']>[0]) {
      const s = service.service as FixtureService;
      return s.operations[operation] ? [] : [{ path: '/body/operation', message: `service ${s.name} has no operation "${operation}"` }];
    },
    evaluate: (src: string, context: Record<string, unknown>) => evaluate(src, context),
    async migrate({ service, state, fromVersion, toVersion }: Parameters<ScenarioPort['migrate']>[0]) {
      const s = service.service as FixtureService;
      let st = state;
      for (let v = fromVersion + 1; v <= toVersion; v++) {
        const m = s.migrations?.[v];
        if (!m) throw new Error(`migrations/${v}.yml is missing`);
        st = m(st);
      }
      return st;
    },
  };
  return port;
}
