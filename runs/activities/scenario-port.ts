// What the run activities need from the scenario engine (scenario/, issue 5), as one narrow port.
// The activities depend on this interface only; `scenario-adapter.ts` binds it to scenario/index.ts
// and tests may pass their own. Plans use the run's own step shape (db/repos/runs.ts PlanStep).
import type { RunGate } from '../../scenario/gate';
import type { GitCredential } from '../../scenario/load/git';
import type { GitPolicy } from '../../scenario/load/git-policy';
import type { PlanStep } from '../../scenario/render/plan';
import type { LoadedService as EngineService } from '../../scenario/model';

export interface LoadedService {
  /** The commit the ref resolved to: recorded on the run and in history. */
  commit: string;
  name: string;
  stateSchemaVersion: number;
  /** The engine's own representation, handed back to render and migrate. */
  service: EngineService;
  /** Per operation, the inputs declared `secret: true` (the API stores their values in the secrets store). */
  secretInputs?: Record<string, string[]>;
  /** service.yml `secrets:`. */
  secretPrefixes?: string[];
  /** What soul-lint reports for this commit (file:line:col): a service with any is refused at registration and publishing. */
  errors?: RenderError[];
  /** Its operations (scenario/<operation>/main.yml) with their declared inputs, as the API shows a version. */
  operations?: OperationInfo[];
}

export interface OperationInfo {
  name: string;
  inputs: { name: string; type: string; required: boolean; default?: unknown; secret: boolean; schema?: object }[];
}

export interface RenderError {
  file: string;
  line: number;
  col: number;
  rule: string;
  message: string;
  fix?: string;
}

/** What the workflow needs of the scenario's orchestration; targets (`on:`, `where:`) are already applied. */
export interface Orchestration {
  /** Host count or "p%" per batch. */
  serial?: number | string;
  /** The scenario's failure budget, in hosts of this render (scenario/budget.ts). */
  budget?: RunBudget;
  /** `gate:` between batches (scenario/gate.ts): the health expression's source and the waits. */
  gate?: RunGate;
}

/** Failed (and, with countUnknown, unknown) hosts a run may have and still commit. */
export interface RunBudget {
  maxFailed: number;
  countUnknown: boolean;
}

export interface RenderedPlan {
  /** Every step of the scenario per targeted host, in order; a step left out here has `skip`.
   *  `reads`: what render read of the host's facts. `input`: the host's own input as rendered, when
   *  per-host input applied to it. */
  hosts: { sid: string; steps: PlanStep[]; reads: { facts: string[] }; input?: Record<string, unknown> }[];
  /** The input as render resolved it (defaults filled in): what apply-time expressions read. */
  input: Record<string, unknown>;
  /** Hosts the scenario's own `on:`/`where:` left out, with the reason. */
  excluded: { sid: string; reason: string }[];
  orchestration: Orchestration;
  /** The targeted hosts cut into `serial:` batches, in order (one batch without `serial:`). */
  batches: string[][];
  /** `state_changes.sets`, already evaluated: merged into the state at commit. */
  stateSets: Record<string, unknown>;
}

/** A run the API refuses before anything starts: the body field (JSON pointer) and the rule broken. */
export interface RunProblem {
  path: string;
  message: string;
}

export type RenderResult = { ok: true; plan: RenderedPlan } | { ok: false; errors: RenderError[] };

export interface ScenarioPort {
  /**
   * `credentialRef` is the service's; the keeper's wrapper (runs/git-access.ts) adds the source
   * policy and the resolved credential before the engine clones.
   */
  loadService(args: {
    git: string;
    ref: string;
    cacheDir: string;
    credentialRef?: string;
    policy?: GitPolicy;
    credential?: GitCredential;
  }): Promise<LoadedService>;
  render(args: {
    service: LoadedService;
    operation: string;
    input: Record<string, unknown>;
    state: Record<string, unknown>;
    /** `input`: the host's per-host input layer (scenario/host-input.ts), merged over `input` for it. */
    hosts: { sid: string; soulprint: Record<string, unknown>; input?: Record<string, unknown> }[];
    /** The handle key and binding, and the secret policy (issues 12, 28); engines without secrets ignore it. */
    secrets?: { binding: string; handleKey: Uint8Array; keeperPrefix: string; inputPrefixes: string[] };
  }): Promise<RenderResult>;
  /** What can be known about a run before it starts: the operation exists, its input resolves
   *  (declared names, required inputs given, types). Empty when the run may start. */
  checkRun(args: { service: LoadedService; operation: string; input: Record<string, unknown> }): RunProblem[];
  /** Evaluates one CEL expression (apply-time `when`, `changed_when`, `failed_when`, `until`, `where`). */
  evaluate(src: string, context: Record<string, unknown>): unknown;
  /** Runs migrations/<v>.yml for v in (from, to], in order; throws when one is missing or fails. */
  migrate(args: {
    service: LoadedService;
    state: Record<string, unknown>;
    fromVersion: number;
    toVersion: number;
  }): Promise<Record<string, unknown>>;
}
