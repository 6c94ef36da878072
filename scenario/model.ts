/**
 * The loaded form of a service repository. Everything keeps its YAML node
 * so later checks and render can point at `file:line:col`.
 */
import type { Position, RenderError } from './errors';
import type { YNode, YScalar } from './yaml/parse';
import type { InputType } from './cel/env';
import type { TemplateSet } from './template';

export interface ExprSource {
  /** CEL source (a YAML boolean becomes `true`/`false`). */
  src: string;
  pos: Position;
  node: YScalar;
}

/** An input's schema as the author declares it: the JSON Schema keywords scenario/input-schema.ts reads and checks values against. */
export interface ValueSchema {
  type: InputType;
  items?: ValueSchema;
  properties?: Record<string, ValueSchema>;
  required?: string[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  pattern?: string;
}

export interface InputDecl {
  name: string;
  type: InputType;
  hasDefault: boolean;
  default?: unknown;
  pos: Position;
  defaultNode?: YNode;
  /** `secret: true`: the value is a secrets-store reference, resolved only at dispatch. */
  secret?: boolean;
  /** `items`, `properties`/`required`, `enum`, `minimum`/`maximum`, `pattern` (scenario/input-schema.ts); absent for a bare `{type}`. */
  schema?: ValueSchema;
}

export interface TaskRef {
  /** Name of an earlier task. */
  name: string;
  pos: Position;
}

export interface Task {
  index: number;
  name: string;
  module: string;
  pos: Position;
  modulePos: Position;
  params?: YNode;
  when?: ExprSource;
  changedWhen?: ExprSource;
  failedWhen?: ExprSource;
  until?: ExprSource;
  retries?: number;
  delay?: number;
  register?: { name: string; pos: Position };
  require: TaskRef[];
  onchanges: TaskRef[];
  on?: { selectors: string[]; pos: Position };
  where?: ExprSource;
  /** `output: safe`: shown even when the step may read a file holding a secret (docs/secrets.md "Output"). */
  outputSafe?: boolean;
  /** `loop:`: a CEL list expression (or a YAML list, its strings interpolated), evaluated at
   *  render per host; the task becomes one step per item, each seeing `item` and `loop`. */
  loop?: TaskLoop;
}

export type TaskLoop = { kind: 'expr'; expr: ExprSource; pos: Position } | { kind: 'list'; node: YNode; pos: Position };

export interface StateSet {
  key: string;
  node: YNode;
  pos: Position;
}

export interface Scenario {
  operation: string;
  file: string;
  inputs: Map<string, InputDecl>;
  stateSets: StateSet[];
  tasks: Task[];
  on?: { selectors: string[]; pos: Position };
  serial?: { value: number | string; pos: Position };
  /** `max_failed:` (scenario/budget.ts); absent: no host may fail. */
  maxFailed?: { value: number | string; pos: Position };
  /** `max_failed_unknown:` false: unknown hosts are left pending without counting (default true). */
  maxFailedUnknown?: { value: boolean; pos: Position };
  /** `gate:` between `serial:` batches (scenario/gate.ts): a health check and/or an approval. */
  gate?: ScenarioGate;
  where?: ExprSource;
}

export interface ScenarioGate {
  health?: ExprSource;
  /** `timeout:` and `interval:` as written (Go-style durations); absent: the defaults. */
  timeout?: { value: string; pos: Position };
  interval?: { value: string; pos: Position };
  approval: boolean;
  pos: Position;
}

/** A state key a migration names (`unsets` item, `moves` key or target), where it is written. */
export interface StateKeyRef {
  key: string;
  pos: Position;
}

export interface Migration {
  version: number;
  file: string;
  stateSets: StateSet[];
  /** `state_changes.unsets`: keys removed from the state. */
  unsets: StateKeyRef[];
  /** `state_changes.moves`: each `from` key's value moves to `to` (renamed), `from` is removed. */
  moves: Array<{ from: StateKeyRef; to: StateKeyRef }>;
  /** Where `state_changes` is (or the file's start): a migration that changes nothing is reported there. */
  pos: Position;
}

export interface TemplateFile {
  /** Path relative to templates/, as `core.file.rendered` names it. */
  name: string;
  file: string;
  source: string;
  /** Absent when the template does not parse (an error is recorded). */
  set?: TemplateSet;
}

/** How the soul starts a shipped module's program (module.yml `runtime:`). */
export const MODULE_RUNTIMES = ['node', 'sh'] as const;
export type ModuleRuntime = (typeof MODULE_RUNTIMES)[number];

/** A module shipped with the service (modules/<module>/module.yml), one per state it declares. */
export interface ServiceModule {
  /** `<service>.<module>.<state>`: never `core.*`. */
  name: string;
  module: string;
  state: string;
  /** JSON schema (draft-07, ajv strict) of the step's params. */
  params: Record<string, unknown>;
  /** The program answers a dry run itself; otherwise a plan says it would run, without running it. */
  dryRun: boolean;
  timeoutMs: number;
  /** module.yml `runtime:`: `node` runs the program with the soul's own Node.js, `sh` with /bin/sh;
   *  absent: the program is run itself (its #! line or ELF header). */
  runtime?: ModuleRuntime;
  program: ModuleProgram;
  pos: Position;
}

/** A module program as it travels in a step (PlanStep.program) to the soul, which caches it by hash. */
export interface ModuleProgram {
  /** Path in the repository, for messages. */
  file: string;
  /** sha256 of the program's bytes, hex: its name in the soul's `paths.modules` cache. */
  sha256: string;
  /** The program's bytes, base64. */
  content: string;
}

export interface LoadedService {
  root: string;
  name: string;
  stateSchemaVersion: number;
  /** service.yml `secrets:`: prefixes of the secrets store this service may read. */
  secretPrefixes?: string[];
  scenarios: Map<string, Scenario>;
  templates: Map<string, TemplateFile>;
  migrations: Map<number, Migration>;
  /** modules/<module>/module.yml, by `<service>.<module>.<state>` (docs/state-modules.md). */
  modules?: Map<string, ServiceModule>;
  /** Every problem found while loading and checking. Render refuses a service with any. */
  errors: RenderError[];
}
