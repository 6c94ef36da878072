// Binds the ScenarioPort to the scenario engine (scenario/index.ts, issue 5). The engine is loaded
// when first used rather than imported, so the keeper builds and runs while that module is being
// written; until it exists, every run fails at render with a message saying so (nothing applied).
import type { PlannedStep } from '../../db/repos/runs';
import type { LoadedService, OperationInfo, Orchestration, RenderError, RenderResult, ScenarioPort } from './scenario-port';

interface Engine {
  loadServiceFromGit(a: { git: string; ref: string; cacheDir: string }): Promise<{ commit: string; service: any }>;
  renderWithSecrets?: Engine['render'];
  render(a: { service: unknown; operation: string; input: unknown; state: unknown; hosts: { sid: string; soulprint: unknown }[]; secrets?: unknown }):
    { ok: true; plan: any } | { ok: false; errors: RenderError[] } | Promise<{ ok: true; plan: any } | { ok: false; errors: RenderError[] }>;
  evaluateExpression(src: string, context: Record<string, unknown>): unknown;
  applyMigrations(service: unknown, state: unknown, from: number, to: number): unknown;
  checkRunInput(service: unknown, operation: string, input: Record<string, unknown>): { operation: boolean; problems: { name: string; message: string }[] };
}

function loadEngine(): Engine | Error {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('../../scenario') as Engine;
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

const SKIP: Record<string, PlannedStep['skip']> = { 'not matched by `on:`': 'on', '`where:` is false': 'where', '`when:` is false': 'when' };

/** The engine's per-host steps in the run's own shape (db/repos/runs.ts PlannedStep), with the
 *  steps render left out on this host put back in place, marked `skip`, so the report lists every
 *  step and a later step can read their registered (skipped) results. */
function toSteps(steps: any[], skipped: { index: number; reason: string }[], tasks: any[]): PlannedStep[] {
  const left = skipped.map(({ index, reason }): PlannedStep => {
    const t = tasks.find((x) => x.index === index) ?? {};
    return { index, name: str(t.name) ?? `step ${index}`, module: String(t.module ?? ''), params: {}, register: str(t.register?.name), skip: SKIP[reason] ?? 'when' };
  });
  return [...steps.map((s, i): PlannedStep => ({
    index: num(s.index) ?? i, name: str(s.name) ?? `step ${i}`, module: String(s.module),
    params: wireParams(String(s.module), (s.params ?? {}) as Record<string, unknown>),
    when: str(s.when), changed_when: str(s.changed_when), failed_when: str(s.failed_when), until: str(s.until),
    retries: num(s.retries), delay_ms: num(s.delay_ms) ?? (num(s.delay) !== undefined ? num(s.delay)! * 1000 : undefined), register: str(s.register),
    require: Array.isArray(s.require) ? s.require : undefined, onchanges: Array.isArray(s.onchanges) ? s.onchanges : undefined,
  })), ...left].sort((a, b) => a.index - b.index);
}

function toPlan(plan: any, tasks: any[]): RenderResult {
  const hostsRaw: [string, any][] = plan.hosts.map((h: any) => [h.sid, h]);
  // The engine applies on:/where: itself (excluded hosts are absent from plan.hosts); only serial: is left.
  const orch = (plan.orchestration ?? {}) as Orchestration;
  return {
    ok: true,
    plan: {
      hosts: hostsRaw.map(([sid, h]) => ({ sid, steps: toSteps(h.steps ?? [], h.skipped ?? [], tasks) })),
      input: (plan.input ?? {}) as Record<string, unknown>,
      excluded: Array.isArray(plan.orchestration?.excluded) ? plan.orchestration.excluded : [],
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
      const operations: OperationInfo[] = [];
      if (service?.scenarios instanceof Map) {
        type Decl = { secret?: boolean; type?: unknown; hasDefault?: boolean; default?: unknown };
        for (const [op, s] of service.scenarios as Map<string, { inputs: Map<string, Decl> }>) {
          secretInputs[op] = [...s.inputs.entries()].filter(([, d]) => d.secret === true).map(([n]) => n);
          operations.push({
            name: op,
            inputs: [...s.inputs.entries()].map(([n, d]) => ({
              name: n, type: String(d.type ?? 'any'), required: d.hasDefault !== true, secret: d.secret === true,
              ...(d.hasDefault === true && d.secret !== true ? { default: d.default } : {}),
            })),
          });
        }
      }
      operations.sort((a, b) => a.name.localeCompare(b.name));
      return {
        commit, name: String(service?.name ?? service?.manifest?.name ?? ''), stateSchemaVersion: version, service,
        secretInputs, secretPrefixes: Array.isArray(service?.secretPrefixes) ? service.secretPrefixes : [],
        errors: Array.isArray(service?.errors) ? (service.errors as RenderError[]) : [], operations,
      } satisfies LoadedService;
    },
    async render(a) {
      const e = get();
      const req = { service: a.service.service, operation: a.operation, input: a.input, state: a.state, hosts: a.hosts };
      const r = await (e.renderWithSecrets && a.secrets ? e.renderWithSecrets({ ...req, secrets: a.secrets }) : e.render(req));
      const tasks = (a.service.service as any)?.scenarios?.get?.(a.operation)?.tasks ?? [];
      return r.ok ? toPlan(r.plan, tasks) : { ok: false, errors: r.errors };
    },
    checkRun(a) {
      const r = get().checkRunInput(a.service.service, a.operation, a.input);
      if (!r.operation) {
        const ops = [...((a.service.service as any)?.scenarios?.keys?.() ?? [])].join(', ');
        return [{ path: '/body/operation', message: `service ${a.service.name} has no operation "${a.operation}" (scenario/${a.operation}/main.yml); use one of: ${ops}` }];
      }
      return r.problems.map((p) => ({ path: `/body/input/${p.name}`, message: p.message }));
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
