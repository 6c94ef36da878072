/**
 * Module and parameter checks for one task: the module exists (SL009), the
 * parameters are known, present and well-typed (SL010), `${...}` in them is
 * valid (SL011/SL012/SL017), and a `core.file.rendered` template exists in
 * templates/ (SL015). Values that are `${...}` are only known at render, so
 * the static schema check skips them and render checks them again resolved.
 */
import * as path from 'node:path';
import { makeError, type RenderError } from '../errors';
import type { LoadedService, Task } from '../model';
import { MODULES, checkModuleParams } from '../modules';
import { checkInterpolations, type ScopeInfo } from './expressions';
import { checkTemplateVars } from './template-vars';
import { checkModuleUse } from './module-use';
import { pair, toValue } from '../yaml/node';
import { checkServiceModuleParams, serviceModule } from '../load/modules';

export const RULES = { unknownModule: 'SL009', params: 'SL010', template: 'SL015' } as const;

export function checkTaskParams(service: LoadedService, t: Task, info: ScopeInfo): RenderError[] {
  const shipped = serviceModule(service, t.module);
  if (!MODULES.has(t.module) && !shipped) {
    const own = service.name && t.module.startsWith(`${service.name}.`);
    const [, mod, state] = t.module.split('.');
    return [
      makeError(
        t.modulePos,
        RULES.unknownModule,
        `unknown module "${t.module}"`,
        own
          ? `add modules/${mod}/module.yml declaring state "${state}", or use one of: ${[...(service.modules?.keys() ?? [])].join(', ') || '(this service ships no modules)'}`
          : `use one of: ${[...MODULES.keys(), ...(service.modules?.keys() ?? [])].join(', ')}`,
      ),
    ];
  }
  const out = checkInterpolations(t.params, info);
  const statics: Record<string, unknown> = {};
  const dynamic = new Set<string>();
  if (t.params?.kind === 'map') {
    for (const p of t.params.pairs) {
      const key = String(p.key.value);
      if (p.value.kind === 'scalar' && typeof p.value.value === 'string' && p.value.text.includes('${'))
        dynamic.add(key);
      else if (JSON.stringify(p.value).includes('${')) dynamic.add(key);
      else statics[key] = toValue(p.value);
    }
  }
  for (const prob of (shipped ? checkServiceModuleParams(shipped, statics) : checkModuleParams(t.module, statics)) ??
    []) {
    if (prob.param && dynamic.has(prob.param)) continue;
    const p = prob.param ? pair(t.params, prob.param) : undefined;
    const pos = p ? (prob.message.startsWith('unknown') ? p.key.pos : p.value.pos) : (t.params?.pos ?? t.pos);
    const fix = prob.message.startsWith('unknown')
      ? `remove it; ${t.module} takes: ${shipped ? Object.keys((shipped.params['properties'] ?? {}) as object).join(', ') : paramNames(t.module)}`
      : prob.message.startsWith('missing')
        ? `add "${prob.param}" under params`
        : `fix the value of "${prob.param ?? 'params'}"`;
    out.push(makeError(pos, RULES.params, `${t.module}: ${prob.message}`, fix));
  }
  out.push(...checkModuleUse(t, statics));
  const authored = t.module === 'core.file.rendered' ? pair(t.params, 'content') : undefined;
  if (authored) {
    out.push(
      makeError(
        authored.key.pos,
        RULES.params,
        'core.file.rendered: `content` is produced by rendering the template',
        'remove `content`, or use core.file.present',
      ),
    );
  }
  if (t.module === 'core.file.rendered' && typeof statics['template'] === 'string') {
    const p = pair(t.params, 'template')!;
    const err = templateProblem(service, statics['template']);
    if (err) out.push(makeError(p.value.pos, RULES.template, err.message, err.fix));
    else out.push(...checkTemplateVars(service, t));
  }
  return out;
}

function paramNames(module: string): string {
  const props = (MODULES.get(module)!.params as { properties: Record<string, unknown> }).properties;
  return Object.keys(props)
    .filter((k) => !(module === 'core.file.rendered' && k === 'content'))
    .join(', ');
}

/** Resolves a `template:` value to a loaded template, refusing paths outside templates/. */
export function templateProblem(service: LoadedService, name: string): { message: string; fix: string } | null {
  const norm = path.posix.normalize(name);
  if (path.posix.isAbsolute(name) || norm.startsWith('../') || norm === '..') {
    return {
      message: `template "${name}" points outside templates/`,
      fix: 'name a file under templates/, without ".." or a leading "/"',
    };
  }
  if (!service.templates.has(norm)) {
    return {
      message: `template "${name}" not found under templates/`,
      fix: `add templates/${norm} or use one of: ${[...service.templates.keys()].join(', ') || '(no templates)'}`,
    };
  }
  return null;
}
