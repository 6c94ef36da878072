/**
 * The module registry: name -> parameter schema. Adding a module is one file
 * here and one line below. Used by render, soul-lint and the soul.
 */
import type AjvClass from 'ajv';
import type { ValidateFunction, ErrorObject } from 'ajv';
import { checkSchema, type Schema, type SchemaError } from '../../common/schema-check';
import type { ModuleSpec } from './types';
import { corePkgInstalled, corePkgRemoved } from './core-pkg-installed';
import { coreFilePresent } from './core-file-present';
import { coreFileRendered } from './core-file-rendered';
import { coreServiceReloaded, coreServiceRestarted, coreServiceRunning, coreServiceStopped } from './core-service';
import { coreCmdRun } from './core-cmd-run';
import { coreGroupAbsent, coreGroupPresent, coreUserAbsent, coreUserPresent } from './core-accounts';
import { coreDirAbsent, coreDirPresent, coreFileAbsent, coreLinkPresent } from './core-paths';
import { coreLineAbsent, coreLinePresent } from './core-line';
import { coreBlockPresent } from './core-block';
import { coreIniSet } from './core-ini';
import { coreSysctlSet } from './core-sysctl';
import { coreCronAbsent, coreCronPresent } from './core-cron';
import { coreSystemdUnit } from './core-systemd-unit';
import { coreUrlFetched } from './core-url-fetched';
import { coreArchiveExtracted } from './core-archive-extracted';
import { coreGitCheckout } from './core-git-checkout';

export type { ModuleSpec, ModuleResult } from './types';
export { TRIGGERED_MODULES } from './core-service';

export const MODULES: ReadonlyMap<string, ModuleSpec> = new Map(
  [
    corePkgInstalled,
    corePkgRemoved,
    coreFilePresent,
    coreFileRendered,
    coreFileAbsent,
    coreDirPresent,
    coreDirAbsent,
    coreLinkPresent,
    coreServiceRunning,
    coreServiceStopped,
    coreServiceRestarted,
    coreServiceReloaded,
    coreCmdRun,
    coreUserPresent,
    coreUserAbsent,
    coreGroupPresent,
    coreGroupAbsent,
    coreLinePresent,
    coreLineAbsent,
    coreBlockPresent,
    coreIniSet,
    coreSysctlSet,
    coreCronPresent,
    coreCronAbsent,
    coreSystemdUnit,
    coreUrlFetched,
    coreArchiveExtracted,
    coreGitCheckout,
  ].map((m) => [m.name, m]),
);

// ajv is loaded at the first render or lint check, not with this module: the soul imports this
// module for checkWireParams, which walks the wire schema without a compiler (common/schema-check.ts),
// so the soul never loads ajv (docs/performance.md).
let ajv: AjvClass | undefined;
const validators = new Map<string, ValidateFunction>();

function validatorFor(name: string): ValidateFunction | undefined {
  let v = validators.get(name);
  if (!v) {
    const spec = MODULES.get(name);
    if (!spec) return undefined;
    ajv ??= new (require('ajv') as { default: typeof AjvClass }).default({
      allErrors: true,
      strict: true,
      allowUnionTypes: true,
    });
    v = ajv.compile(spec.params);
    validators.set(name, v);
  }
  return v;
}

/** The schema the soul checks a received step's params with (exported for its test against ajv). */
export function wireSchema(module: string): Schema | undefined {
  const spec = MODULES.get(module);
  return spec ? ((spec.wire ?? spec.params) as Schema) : undefined;
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
  const schema = wireSchema(module);
  if (!schema) return null;
  return [...checkSchema(schema, params).map(describe), ...ruleProblems(module, params)];
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
  if (v(params)) return ruleProblems(module, params);
  return [...problemsOf(v.errors), ...ruleProblems(module, params)];
}

/** The module's own rules beyond its schema (ModuleSpec.check), as problems. */
function ruleProblems(module: string, params: unknown): ParamProblem[] {
  const check = MODULES.get(module)?.check;
  if (!check || params === null || typeof params !== 'object' || Array.isArray(params)) return [];
  return check(params as Record<string, unknown>).map((p) => ({ pointer: `/${p.param}`, ...p }));
}

function describe(e: ErrorObject | SchemaError): ParamProblem {
  const p = e.params as Record<string, string>;
  const param = e.instancePath.split('/')[1];
  if (e.keyword === 'additionalProperties')
    return {
      pointer: e.instancePath,
      param: p['additionalProperty'],
      message: `unknown parameter "${p['additionalProperty']}"`,
    };
  if (e.keyword === 'required')
    return {
      pointer: e.instancePath,
      param: p['missingProperty'],
      message: `missing required parameter "${p['missingProperty']}"`,
    };
  const where = param ? `parameter "${param}"` : 'params';
  if (e.keyword === 'contains')
    return {
      pointer: e.instancePath,
      ...(param ? { param } : {}),
      message: `${where} must name the candidate file with %s in one of its arguments`,
    };
  if (e.keyword === 'pattern')
    return {
      pointer: e.instancePath,
      ...(param ? { param } : {}),
      message: `${where} has an invalid value (must match ${p['pattern']})`,
    };
  return { pointer: e.instancePath, ...(param ? { param } : {}), message: `${where} ${e.message ?? 'is invalid'}` };
}

/** Module names that look like `core.<module>.<state>`. */
export const MODULE_NAME = /^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$/;

/** ajv's errors as problems; the per-item errors a failed `contains` collects say nothing more than it does. */
function problemsOf(errors: ErrorObject[] | null | undefined): ParamProblem[] {
  return (errors ?? []).filter((e) => !e.schemaPath.includes('/contains/')).map(describe);
}
