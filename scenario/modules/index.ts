/**
 * The module registry: name -> parameter schema. Adding a module is one file
 * here and one line below. Used by render, soul-lint and the soul.
 */
import type AjvClass from 'ajv';
import type { ValidateFunction, ErrorObject } from 'ajv';
import type { ModuleSpec } from './types';
import { corePkgInstalled } from './core-pkg-installed';
import { coreFilePresent } from './core-file-present';
import { coreFileRendered } from './core-file-rendered';

export type { ModuleSpec, ModuleResult } from './types';

export const MODULES: ReadonlyMap<string, ModuleSpec> = new Map(
  [corePkgInstalled, coreFilePresent, coreFileRendered].map((m) => [m.name, m]),
);

// ajv is loaded at the first check, not with this module: the soul imports it for checkWireParams,
// and a soul that starts (every host; in push mode every SSH dispatch) pays ajv's load only when a
// step arrives (docs/performance.md).
let ajv: AjvClass | undefined;
const validators = new Map<string, ValidateFunction>();

function validatorFor(name: string, wire = false): ValidateFunction | undefined {
  const key = `${wire ? 'wire' : 'params'}:${name}`;
  let v = validators.get(key);
  if (!v) {
    const spec = MODULES.get(name);
    if (!spec) return undefined;
    ajv ??= new (require('ajv') as { default: typeof AjvClass }).default({ allErrors: true, strict: true });
    v = ajv.compile(wire ? spec.wire ?? spec.params : spec.params);
    validators.set(key, v);
  }
  return v;
}

/** The params as the soul receives them: render's own inputs (core.file.rendered's `template`
 *  and `vars`) dropped, keeping only what the module's `wire` schema names. */
export function toWireParams(module: string, params: Record<string, unknown>): Record<string, unknown> {
  const wire = MODULES.get(module)?.wire as { properties?: Record<string, unknown> } | undefined;
  if (!wire?.properties) return params;
  const keep = wire.properties;
  return Object.fromEntries(Object.entries(params).filter(([k]) => k in keep));
}

/** Checks the params a soul received for a step (after render) against the module's contract. */
export function checkWireParams(module: string, params: unknown): ParamProblem[] | null {
  const v = validatorFor(module, true);
  if (!v) return null;
  if (v(params)) return [];
  return problemsOf(v.errors);
}

export interface ParamProblem {
  /** JSON pointer into params, '' for the params object itself. */
  pointer: string;
  /** The parameter the problem is about, when there is one. */
  param?: string;
  message: string;
}

/** Checks resolved params against the module's schema. Unknown module: returns null. */
export function checkModuleParams(module: string, params: unknown): ParamProblem[] | null {
  const v = validatorFor(module);
  if (!v) return null;
  if (v(params)) return [];
  return problemsOf(v.errors);
}

function describe(e: ErrorObject): ParamProblem {
  const p = e.params as Record<string, string>;
  const param = e.instancePath.split('/')[1];
  if (e.keyword === 'additionalProperties') return { pointer: e.instancePath, param: p['additionalProperty'], message: `unknown parameter "${p['additionalProperty']}"` };
  if (e.keyword === 'required') return { pointer: e.instancePath, param: p['missingProperty'], message: `missing required parameter "${p['missingProperty']}"` };
  const where = param ? `parameter "${param}"` : 'params';
  if (e.keyword === 'contains') return { pointer: e.instancePath, ...(param ? { param } : {}), message: `${where} must name the candidate file with %s in one of its arguments` };
  if (e.keyword === 'pattern') return { pointer: e.instancePath, ...(param ? { param } : {}), message: `${where} has an invalid value (must match ${p['pattern']})` };
  return { pointer: e.instancePath, ...(param ? { param } : {}), message: `${where} ${e.message ?? 'is invalid'}` };
}

/** Module names that look like `core.<module>.<state>`. */
export const MODULE_NAME = /^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$/;

/** ajv's errors as problems; the per-item errors a failed `contains` collects say nothing more than it does. */
function problemsOf(errors: ErrorObject[] | null | undefined): ParamProblem[] {
  return (errors ?? []).filter((e) => !e.schemaPath.includes('/contains/')).map(describe);
}
