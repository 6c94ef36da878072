/**
 * Modules shipped with a service: `modules/<module>/module.yml` (the contract) beside its program.
 * Each state the contract declares is a module named `<service>.<module>.<state>`, so it can never
 * shadow a `core.*` one. The program is read with the version's commit (the loader materialises
 * that commit), hashed, and travels in each step that uses it (docs/state-modules.md, "modules
 * shipped with a service"). Problems are SL030 at their position.
 *
 *   description: one key in a key=value file
 *   program: kv.js          # in modules/<module>/, executable (its #! line says how it runs)
 *   runtime: node           # optional: node (the soul's own Node.js) or sh (/bin/sh) runs it;
 *                           # then it needs neither a #! line nor the executable bit
 *   timeout: 10             # seconds per run, 1-300 (default 30)
 *   states:
 *     present:
 *       dry_run: true       # the program answers {"dry_run": true} without changing anything
 *       params: {type: object, required: [path], properties: {path: {type: string}}}
 */
import { createHash } from 'node:crypto';
import type AjvClass from 'ajv';
import { makeError, ScenarioError, type RenderError } from '../errors';
import { LIMITS } from '../limits';
import { MODULE_RUNTIMES, type LoadedService, type ModuleRuntime, type ServiceModule } from '../model';
import { parseYaml, type YNode } from '../yaml/parse';
import { child, pair, toValue } from '../yaml/node';
import { validateNode } from '../schema/validate';
import type { RepoFs } from './repo-fs';

export const RULE_MODULE = 'SL030';

const IDENT = '^[a-z][a-z0-9_]{0,62}$';
const DEFAULT_TIMEOUT_S = 30;

const contractSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['program', 'states'],
  properties: {
    description: { type: 'string' },
    program: { type: 'string', pattern: '^[A-Za-z0-9_][A-Za-z0-9._-]*$' },
    runtime: { type: 'string', enum: [...MODULE_RUNTIMES] },
    timeout: { type: 'integer', minimum: 1, maximum: 300 },
    states: {
      type: 'object',
      minProperties: 1,
      propertyNames: { pattern: IDENT },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['params'],
        properties: { dry_run: { type: 'boolean' }, params: { type: 'object' }, description: { type: 'string' } },
      },
    },
  },
};

let ajv: AjvClass | undefined;
/** The ajv that compiles contracts' params schemas (strict: an unknown keyword is an error). */
export function moduleAjv(): AjvClass {
  ajv ??= new (require('ajv') as { default: typeof AjvClass }).default({ allErrors: true, strict: true });
  return ajv;
}

export function loadServiceModules(repo: RepoFs, service: LoadedService, errors: RenderError[]): void {
  const guard = <T>(fn: () => T): T | undefined => {
    try {
      return fn();
    } catch (e) {
      if (e instanceof ScenarioError) {
        errors.push(e.toRenderError());
        return undefined;
      }
      throw e;
    }
  };
  const contracts = guard(() => repo.list('modules', 'module.yml')) ?? [];
  if (contracts.length === 0) return;
  const modules = new Map<string, ServiceModule>();
  service.modules = modules;
  if (contracts.length > LIMITS.maxServiceModules) {
    errors.push(
      makeError(
        { file: contracts[0]!, line: 1, col: 1 },
        RULE_MODULE,
        `more than ${LIMITS.maxServiceModules} modules under modules/`,
        'ship fewer modules',
      ),
    );
    return;
  }
  for (const rel of contracts) {
    const m = /^modules\/([^/]+)\/module\.yml$/.exec(rel);
    const top = { file: rel, line: 1, col: 1 };
    if (!m || !new RegExp(IDENT).test(m[1]!)) {
      errors.push(
        makeError(
          top,
          RULE_MODULE,
          `${rel}: a module is modules/<name>/module.yml with <name> matching ${IDENT}`,
          'move the contract to modules/<name>/module.yml',
        ),
      );
      continue;
    }
    if (service.name === 'core') {
      errors.push(
        makeError(
          top,
          RULE_MODULE,
          'a service named "core" cannot ship modules: their names would be core.*',
          'rename the service',
        ),
      );
      continue;
    }
    const doc = guard(() => parseYaml(repo.readText(rel), rel));
    if (doc === undefined) continue;
    if (doc === null) {
      errors.push(makeError(top, RULE_MODULE, `${rel} is empty`, 'add `program` and `states`'));
      continue;
    }
    const shape = validateNode(contractSchema, doc, RULE_MODULE, rel);
    if (shape.length) {
      errors.push(...shape);
      continue;
    }
    const runtime = toValue(child(doc, 'runtime')) as ModuleRuntime | undefined;
    const program = readProgram(repo, m[1]!, doc, runtime, errors);
    if (!program) continue;
    const timeout = toValue(child(doc, 'timeout')) as number | undefined;
    const states = child(doc, 'states');
    for (const p of states?.kind === 'map' ? states.pairs : []) {
      const state = String(p.key.value);
      const params = pair(p.value, 'params')!;
      const schema = toValue(params.value) as Record<string, unknown>;
      const problem = schemaProblem(schema);
      if (problem) {
        errors.push(
          makeError(
            params.value.pos,
            RULE_MODULE,
            `${rel}: the params schema of state "${state}" is not a valid JSON schema: ${problem}`,
            'write a draft-07 JSON schema with `type: object` (ajv strict mode: no unknown keywords)',
          ),
        );
        continue;
      }
      const name = `${service.name}.${m[1]}.${state}`;
      modules.set(name, {
        name,
        module: m[1]!,
        state,
        params: schema,
        dryRun: toValue(pair(p.value, 'dry_run')?.value) === true,
        timeoutMs: (timeout ?? DEFAULT_TIMEOUT_S) * 1000,
        ...(runtime ? { runtime } : {}),
        program,
        pos: p.key.pos,
      });
    }
  }
}

function readProgram(
  repo: RepoFs,
  module: string,
  doc: YNode,
  runtime: ModuleRuntime | undefined,
  errors: RenderError[],
): ServiceModule['program'] | undefined {
  const node = pair(doc, 'program')!;
  const rel = `modules/${module}/${String(node.value.kind === 'scalar' ? node.value.value : '')}`;
  const at = node.value.pos;
  try {
    if (!repo.exists(rel)) {
      errors.push(
        makeError(at, RULE_MODULE, `program ${rel} is missing`, `add ${rel}, or name the program that is there`),
      );
      return undefined;
    }
    const { buf, mode } = repo.readBytes(rel, LIMITS.maxModuleProgramBytes);
    // A named runtime is the interpreter: the soul hands it the program as a file to read.
    if (runtime)
      return { file: rel, sha256: createHash('sha256').update(buf).digest('hex'), content: buf.toString('base64') };
    if ((mode & 0o111) === 0) {
      errors.push(
        makeError(
          at,
          RULE_MODULE,
          `program ${rel} is not executable`,
          `chmod +x ${rel} and commit it (git keeps the executable bit)`,
        ),
      );
      return undefined;
    }
    if (!buf.subarray(0, 2).equals(Buffer.from('#!')) && !buf.subarray(0, 4).equals(Buffer.from('\x7fELF'))) {
      errors.push(
        makeError(
          at,
          RULE_MODULE,
          `program ${rel} starts with neither #! nor an ELF header: the soul runs it as argv, without a shell`,
          'name its runtime in module.yml (`runtime: node` or `runtime: sh`), or start it with a #! line',
        ),
      );
      return undefined;
    }
    return { file: rel, sha256: createHash('sha256').update(buf).digest('hex'), content: buf.toString('base64') };
  } catch (e) {
    if (e instanceof ScenarioError) {
      const r = e.toRenderError();
      errors.push(makeError(at, RULE_MODULE, r.message, r.fix));
      return undefined;
    }
    throw e;
  }
}

function schemaProblem(schema: Record<string, unknown>): string | null {
  if (schema['type'] !== 'object') return 'its `type` must be object (params are a map)';
  try {
    moduleAjv().compile(schema);
    return null;
  } catch (e) {
    return (e as Error).message.split('\n')[0]!;
  }
}

/** The service module a task names, if it is one of this service's (never a `core.*` name). */
export function serviceModule(service: LoadedService, name: string): ServiceModule | undefined {
  return name.startsWith('core.') ? undefined : service.modules?.get(name);
}

const validators = new WeakMap<ServiceModule, ReturnType<AjvClass['compile']>>();

/** Problems of a step's params against a service module's contract, in the words of core modules'. */
export function checkServiceModuleParams(
  mod: ServiceModule,
  params: unknown,
): Array<{ param?: string; message: string }> {
  let v = validators.get(mod);
  if (!v) {
    v = moduleAjv().compile(mod.params);
    validators.set(mod, v);
  }
  if (v(params)) return [];
  return (v.errors ?? []).map((e) => {
    const p = e.params as Record<string, string>;
    const param = e.instancePath.split('/')[1];
    if (e.keyword === 'additionalProperties')
      return { param: p['additionalProperty'], message: `unknown parameter "${p['additionalProperty']}"` };
    if (e.keyword === 'required')
      return { param: p['missingProperty'], message: `missing required parameter "${p['missingProperty']}"` };
    return {
      ...(param ? { param } : {}),
      message: `${param ? `parameter "${param}"` : 'params'}${e.instancePath.split('/').length > 2 ? ` (at ${e.instancePath})` : ''} ${e.message ?? 'is invalid'}`,
    };
  });
}
