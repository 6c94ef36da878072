// Binds the ScenarioPort to the scenario engine (scenario/index.ts, issue 5). The engine is loaded
// when first used rather than imported, so the keeper builds and runs while that module is being
// written; until it exists, every run fails at render with a message saying so (nothing applied).
import type { PlannedStep } from '../db/repos/runs';
import type { LoadedService, Orchestration, RenderError, RenderResult, ScenarioPort } from './scenario-port';

interface Engine {
  loadServiceFromGit(a: { git: string; ref: string; cacheDir: string }): Promise<{ commit: string; service: any }>;
  renderWithSecrets?: Engine['render'];
  render(a: { service: unknown; operation: string; input: unknown; state: unknown; hosts: { sid: string; soulprint: unknown }[]; secrets?: unknown }):
    { ok: true; plan: any } | { ok: false; errors: RenderError[] } | Promise<{ ok: true; plan: any } | { ok: false; errors: RenderError[] }>;
  evaluateExpression(src: string, context: Record<string, unknown>): unknown;
  applyMigrations(service: unknown, state: unknown, from: number, to: number): unknown;
}

function loadEngine(): Engine | Error {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('../scenario') as Engine;
  } catch (err) {
    return new Error(`the scenario engine is not available in this build: ${(err as Error).message}`);
  }
}

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

// core.file.rendered is rendered on the keeper: the soul receives the finished `content` and its
// module refuses the template's own inputs, so they are not sent (nor need they travel at all).
function wireParams(module: string, params: Record<string, unknown>): Record<string, unknown> {
  if (module !== 'core.file.rendered' || typeof params.content !== 'string') return params;
  const { template: _t, vars: _v, ...rest } = params;
  return rest;
}

/** The engine's per-host steps in the run's own shape (db/repos/runs.ts PlannedStep). */
function toSteps(steps: any[]): PlannedStep[] {
  return steps.map((s, i) => ({
    index: num(s.index) ?? i, name: str(s.name) ?? `step ${i}`, module: String(s.module),
    params: wireParams(String(s.module), (s.params ?? {}) as Record<string, unknown>),
    when: str(s.when), changed_when: str(s.changed_when), failed_when: str(s.failed_when), until: str(s.until),
    retries: num(s.retries), delay_ms: num(s.delay_ms) ?? (num(s.delay) !== undefined ? num(s.delay)! * 1000 : undefined), register: str(s.register),
    require: Array.isArray(s.require) ? s.require : undefined, onchanges: Array.isArray(s.onchanges) ? s.onchanges : undefined,
  }));
}

function toPlan(plan: any): RenderResult {
  const hostsRaw: [string, any][] = Array.isArray(plan.hosts)
    ? plan.hosts.map((h: any) => [h.sid, h.steps])
    : Object.entries(plan.hosts ?? {}).map(([sid, h]: [string, any]) => [sid, Array.isArray(h) ? h : h.steps]);
  // The engine applies on:/where: itself (excluded hosts are absent from plan.hosts); only serial: is left.
  const orch = (plan.orchestration ?? {}) as Orchestration;
  return {
    ok: true,
    plan: {
      hosts: hostsRaw.map(([sid, steps]) => ({ sid, steps: toSteps(steps ?? []) })),
      orchestration: orch.serial === null || orch.serial === undefined ? {} : { serial: orch.serial },
      // nextState is the state with state_changes.sets applied (dotted keys included): merging it is the commit.
      stateSets: (plan.nextState ?? {}) as Record<string, unknown>,
    },
  };
}

export function defaultScenarioPort(): ScenarioPort {
  let engine: Engine | Error | undefined;
  const get = (): Engine => {
    engine ??= loadEngine();
    if (engine instanceof Error) throw engine;
    return engine;
  };
  return {
    async loadService(a) {
      const { commit, service } = await get().loadServiceFromGit(a);
      const version = num(service?.stateSchemaVersion) ?? num(service?.state_schema_version) ?? num(service?.manifest?.state_schema_version) ?? 1;
      const secretInputs: Record<string, string[]> = {};
      if (service?.scenarios instanceof Map) {
        for (const [op, s] of service.scenarios as Map<string, { inputs: Map<string, { secret?: boolean }> }>) {
          secretInputs[op] = [...s.inputs.entries()].filter(([, d]) => d.secret === true).map(([n]) => n);
        }
      }
      return {
        commit, name: String(service?.name ?? service?.manifest?.name ?? ''), stateSchemaVersion: version, service,
        secretInputs, secretPrefixes: Array.isArray(service?.secretPrefixes) ? service.secretPrefixes : [],
      } satisfies LoadedService;
    },
    async render(a) {
      const e = get();
      const req = { service: a.service.service, operation: a.operation, input: a.input, state: a.state, hosts: a.hosts };
      const r = await (e.renderWithSecrets && a.secrets ? e.renderWithSecrets({ ...req, secrets: a.secrets }) : e.render(req));
      return r.ok ? toPlan(r.plan) : { ok: false, errors: r.errors };
    },
    evaluate: (src, context) => get().evaluateExpression(src, context),
    async migrate(a) {
      const out = (await get().applyMigrations(a.service.service, a.state, a.fromVersion, a.toVersion)) as
        { ok: true; state: Record<string, unknown> } | { ok: false; errors: RenderError[] };
      if (!out.ok) throw new Error(out.errors.map((e) => `${e.file}:${e.line}:${e.col} ${e.rule}: ${e.message}`).join('; '));
      return out.state;
    },
  };
}
