/**
 * A state module as the scenario language sees it: its name and the JSON
 * schema of its parameters. The soul (agent/) imports the same registry, so
 * a parameter accepted at render time is one the soul understands.
 */
export interface ModuleSpec {
  name: string;
  description: string;
  /** JSON schema (draft-07, checked with ajv) of the fully resolved `params`. */
  params: Record<string, unknown>;
  /** JSON schema of the params the soul receives, when render changes them (core.file.rendered:
   *  `template`/`vars` become `content`); default: `params`. The soul checks every step with it
   *  before applying. */
  wire?: Record<string, unknown>;
  /** The parameters naming a program the soul runs (as root): a one-off execution may set them only for
   *  a role that may run `core.cmd.run` (runs/executions.ts; a test keeps this list complete). */
  programParams?: readonly string[];
  /** Rules between params that the schema cannot say (two params that exclude each other, a regular
   *  expression that must compile): each problem names its param and, in its message, the fix. Render,
   *  soul-lint, one-off executions and the soul run it after the schema; it judges only the params
   *  present with the right type (soul-lint leaves out the ones only known at render). */
  check?: (params: Record<string, unknown>) => Array<{ param: string; message: string }>;
}

/**
 * What every module's step yields, on every host, as `register: <name>` and in the run report:
 * `skipped: true` when the step did not run on that host (then `ok: true`, `changed: false`).
 */
export interface ModuleResult {
  ok: boolean;
  changed: boolean;
  failed: boolean;
  skipped: boolean;
  /** What the module said (or why the step did not run). */
  output: string;
}
