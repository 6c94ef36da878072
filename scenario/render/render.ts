/**
 * Render: (service, operation, input, state, hosts) -> per-host step plans,
 * or every error found. All-or-nothing: if anything fails on any host, no
 * plan is returned, so nothing can be dispatched.
 *
 * Evaluated at render time: inputs and defaults, `state_changes.sets`, the
 * scenario's and tasks' `on:`/`where:`, every `${...}` in params, templates,
 * and a task's `when:` when it reads no registered result. Left to apply
 * time (as CEL source in the step): `when:` reading registered results, and
 * always `changed_when:`, `failed_when:`, `until:`.
 */
import { resolveGate } from '../gate';
import { ScenarioError, makeError, type RenderError } from '../errors';
import { ErrorList } from './error-list';
import type { LoadedService, Scenario, Task, ExprSource } from '../model';
import type { Scope } from '../cel/env';
import { checkExpression } from '../cel/env';
import { toCel } from '../cel/values';
import { inputTypes } from '../inputs';
import { resolveNode, fixFor, type EvalEnv } from './resolve';
import { compileExpression } from '../cel/program';
import { ExpressionError } from '../cel/evaluate';
import { resolveInputs } from './inputs';
import { renderStepParams } from './step-params';
import { batchSize, batches, matchesSelectors, setPath } from './targets';
import type { HostPlan, PlanStep, RenderHost, RenderPlan, RenderSkip, StepLoop } from './plan';
import { itemEnv, loopItems } from './loop';
import { LIMITS } from '../limits';
import { serviceModule } from '../load/modules';
import { budgetHosts, parseBudget } from '../budget';
import { trackFacts, type FactReads } from './reads';
import { declaredOnly, inputFor } from '../host-input';

export interface RenderRequest {
  service: LoadedService;
  operation: string;
  input: Record<string, unknown>;
  state: Record<string, unknown>;
  hosts: RenderHost[];
}

export type RenderResult = { ok: true; plan: RenderPlan } | { ok: false; errors: RenderError[] };

export function render(req: RenderRequest): RenderResult {
  const { service } = req;
  if (service.errors.length > 0) return { ok: false, errors: service.errors };
  const scenario = service.scenarios.get(req.operation);
  if (!scenario) {
    return {
      ok: false,
      errors: [
        makeError(
          { file: `scenario/${req.operation}/main.yml`, line: 1, col: 1 },
          'SL020',
          `service "${service.name}" has no operation "${req.operation}"`,
          `use one of: ${[...service.scenarios.keys()].join(', ')}`,
        ),
      ],
    };
  }
  const errors = new ErrorList();
  const input = resolveInputs(scenario, req.input, errors);
  if (!errors.empty()) return { ok: false, errors: errors.sorted() };

  const types = inputTypes(scenario.inputs);
  const base = { input: toCel(input), state: toCel(req.state ?? {}) };
  const scope = (soulprint: boolean, registered: string[] = []): Scope => ({
    inputs: types,
    soulprint,
    state: true,
    registered,
    result: false,
  });

  // state_changes: render time, from input and state only.
  const sets: Array<{ key: string; value: unknown }> = [];
  let nextState = { ...(req.state ?? {}) };
  const stateEnv: EvalEnv = { scope: scope(false), celContext: base, label: 'in state_changes: ' };
  for (const s of scenario.stateSets) {
    errors.guard(() => {
      const value = resolveNode(s.node, stateEnv);
      sets.push({ key: s.key, value });
      nextState = setPath(nextState, s.key, value);
    });
  }

  const targeted: RenderHost[] = [];
  const excluded: Array<{ sid: string; reason: string }> = [];
  const hostPlans: HostPlan[] = [];
  const hostScope = scope(true);
  for (const host of req.hosts) {
    if (errors.full()) break;
    // Per-host input (scenario/host-input.ts): this host's layer over the run's input, resolved by
    // the same declarations; its errors name the host.
    let hostInput = base.input;
    let resolved: Record<string, unknown> | undefined;
    const layer = declaredOnly(host.input, scenario.inputs);
    if (layer) {
      const label = `on host ${host.sid}: `;
      resolved = resolveInputs(scenario, inputFor(req.input, layer), {
        add: (e) => errors.add({ ...e, message: `${label}${e.message}` }),
      });
      if (!errors.empty()) continue;
      hostInput = toCel(resolved);
    }
    // Every read of the host's facts is recorded: the plan is stale there only when one of those changed.
    const facts = trackFacts(host.soulprint ?? {}, toCel(host.soulprint ?? {}) as Record<string, unknown>);
    const env: EvalEnv = {
      scope: hostScope,
      celContext: { ...base, input: hostInput, soulprint: { self: facts.cel } },
      label: `on host ${host.sid}: `,
    };
    if (scenario.on && !matchesSelectors(scenario.on.selectors, host.sid, facts.plain)) {
      excluded.push({ sid: host.sid, reason: 'not matched by the scenario `on:`' });
      continue;
    }
    if (scenario.where && !errors.guard(() => evalBool(scenario.where!, env))) {
      excluded.push({ sid: host.sid, reason: 'the scenario `where:` is false' });
      continue;
    }
    targeted.push(host);
    const hostPlan = renderHost(service, scenario, host, facts, env, errors);
    if (resolved) hostPlan.input = resolved;
    hostPlans.push(hostPlan);
  }
  if (!errors.empty()) return { ok: false, errors: errors.sorted() };

  const size = batchSize(scenario.serial?.value, targeted.length);
  const gate = resolveGate(scenario.gate);
  return {
    ok: true,
    plan: {
      service: service.name,
      operation: req.operation,
      input,
      state: req.state ?? {},
      stateChanges: { sets },
      nextState,
      orchestration: {
        serial: size,
        batches: batches(
          targeted.map((h) => h.sid),
          size,
        ),
        excluded,
        budget: renderBudget(scenario, targeted.length),
        ...(gate ? { gate } : {}),
      },
      hosts: hostPlans,
    },
  };
}

function renderHost(
  service: LoadedService,
  scenario: Scenario,
  host: RenderHost,
  facts: FactReads,
  env: EvalEnv,
  errors: ErrorList,
): HostPlan {
  const plan: HostPlan = { sid: host.sid, soulprint: host.soulprint ?? {}, steps: [], reads: { facts: [] } };
  // Step indexes are positions in this host's plan: the task's position while no earlier task has
  // a `loop:`. A requisite names a task, so it stands for every step that task made here.
  const stepsOf = new Map<string, number[]>();
  const push = (task: Task, step: PlanStep): boolean => {
    if (plan.steps.length >= LIMITS.maxStepsPerHost) {
      errors.add(
        makeError(
          task.loop?.pos ?? task.pos,
          'SL022',
          `${env.label}the plan has more than ${LIMITS.maxStepsPerHost} steps for one host (loop items counted)`,
          'loop over fewer items or split the scenario',
        ),
      );
      return false;
    }
    step.index = plan.steps.length;
    plan.steps.push(step);
    const mine = stepsOf.get(task.name);
    if (mine) mine.push(step.index);
    else stepsOf.set(task.name, [step.index]);
    return true;
  };
  // A step left out stays in the plan, marked, so the report lists it and a later step can read its
  // registered (skipped) result.
  const leftOut = (task: Task, skip: RenderSkip, name = task.name, loop?: StepLoop): boolean => {
    const step: PlanStep = { index: 0, name, module: task.module, params: {}, skip };
    if (task.register) step.register = task.register.name;
    if (loop) step.loop = loop;
    return push(task, step);
  };
  const loopScope = loopScopeOf(env.scope);
  // One step: its render-time `when:` and its params in `stepEnv` (the host's, or an item's).
  const one = (task: Task, stepEnv: EvalEnv, name: string, loop?: StepLoop): boolean => {
    let applyWhen: string | undefined;
    if (task.when) {
      if (renderTime(task.when, stepEnv.scope)) {
        if (errors.guard(() => evalBool(task.when!, stepEnv)) === false) return leftOut(task, 'when', name, loop);
      } else applyWhen = task.when.src;
    }
    const extra = loop ? { item: loop.item, index: loop.index0 } : undefined;
    const params = errors.guard(() => renderStepParams(service, task, stepEnv, extra));
    if (params === undefined) return true;
    const step = buildStep(task, params, applyWhen, stepsOf);
    step.name = name;
    const shipped = serviceModule(service, task.module);
    if (shipped)
      step.program = {
        sha256: shipped.program.sha256,
        content: shipped.program.content,
        dry_run: shipped.dryRun,
        timeout_ms: shipped.timeoutMs,
        ...(shipped.runtime ? { runtime: shipped.runtime } : {}),
      };
    if (loop) step.loop = loop;
    return push(task, step);
  };
  for (const task of scenario.tasks) {
    if (errors.full()) break;
    if (task.on && !matchesSelectors(task.on.selectors, host.sid, facts.plain)) {
      if (!leftOut(task, 'on', task.name, task.loop ? { index0: 0, length: 0 } : undefined)) break;
      continue;
    }
    if (task.where && errors.guard(() => evalBool(task.where!, env)) === false) {
      if (!leftOut(task, 'where', task.name, task.loop ? { index0: 0, length: 0 } : undefined)) break;
      continue;
    }
    if (!task.loop) {
      if (!one(task, env, task.name)) break;
      continue;
    }
    const items = errors.guard(() => loopItems(task, env, evalValue));
    if (items === undefined) continue;
    if (items.length === 0) {
      if (!leftOut(task, 'loop', task.name, { index0: 0, length: 0 })) break;
      continue;
    }
    let more = true;
    for (let i = 0; i < items.length && more && !errors.full(); i++) {
      more = one(task, itemEnv(env, loopScope, items[i], i), `${task.name}[${i}]`, {
        index0: i,
        length: items.length,
        item: items[i],
      });
    }
    if (!more) break;
  }
  plan.reads = { facts: facts.read() };
  return plan;
}

function buildStep(
  task: Task,
  params: Record<string, unknown>,
  when: string | undefined,
  stepsOf: Map<string, number[]>,
): PlanStep {
  const step: PlanStep = { index: 0, name: task.name, module: task.module, params };
  if (when !== undefined) step.when = when;
  if (task.changedWhen) step.changed_when = task.changedWhen.src;
  if (task.failedWhen) step.failed_when = task.failedWhen.src;
  if (task.until) step.until = task.until.src;
  if (task.retries !== undefined) step.retries = task.retries;
  if (task.delay !== undefined) step.delay_ms = task.delay * 1000;
  if (task.register) step.register = task.register.name;
  if (task.outputSafe) step.output_safe = true;
  if (task.require.length) step.require = task.require.flatMap((r) => stepsOf.get(r.name) ?? []);
  if (task.onchanges.length) step.onchanges = task.onchanges.flatMap((r) => stepsOf.get(r.name) ?? []);
  return step;
}

// One loop scope per host scope (it is shared by every host of a render), so the compiled strings
// memoised per scope (resolve.ts) are reused across hosts.
const loopScopes = new WeakMap<Scope, Scope>();
function loopScopeOf(scope: Scope): Scope {
  let s = loopScopes.get(scope);
  if (!s) {
    s = { ...scope, loop: true };
    loopScopes.set(scope, s);
  }
  return s;
}

const renderTimeMemo = new WeakMap<ExprSource, boolean>();

/** An expression is render-time when it checks without any registered name. */
function renderTime(e: ExprSource, scope: Scope): boolean {
  let v = renderTimeMemo.get(e);
  if (v === undefined) {
    v = checkExpression(e.src, { ...scope, registered: [], result: false }) === null;
    renderTimeMemo.set(e, v);
  }
  return v;
}

/** One whole-string expression's value, its errors at their position in the source. */
function evalValue(e: ExprSource, env: EvalEnv): unknown {
  try {
    return compileExpression(e.src, env.scope)(env.celContext);
  } catch (err) {
    if (err instanceof ExpressionError) {
      const rule =
        err.kind === 'syntax' ? 'SL011' : err.kind === 'name' ? 'SL012' : err.kind === 'type' ? 'SL022' : 'SL021';
      throw new ScenarioError(
        { ...e.pos, col: e.pos.col + (e.node.quoted ? 1 : 0) + err.offset },
        rule,
        `${env.label}${err.message}`,
        fixFor(err),
      );
    }
    throw err;
  }
}

function evalBool(e: ExprSource, env: EvalEnv): boolean {
  const v = evalValue(e, env);
  if (typeof v !== 'boolean')
    throw new ScenarioError(
      e.pos,
      'SL022',
      `${env.label}expression must give a boolean, it gave ${JSON.stringify(v)}`,
      'compare the value, e.g. `x == "y"`',
    );
  return v;
}

/** The scenario's failure budget in hosts of this render; none declared (or unreadable): 0. */
function renderBudget(scenario: Scenario, targeted: number): { maxFailed: number; countUnknown: boolean } {
  const spec = scenario.maxFailed ? parseBudget(scenario.maxFailed.value) : undefined;
  return {
    maxFailed: spec && typeof spec !== 'string' ? budgetHosts(spec, targeted) : 0,
    countUnknown: scenario.maxFailedUnknown?.value ?? true,
  };
}
