/**
 * Resolves one task's params for one host and checks them against the
 * module schema with their final values. For core.file.rendered the
 * template is executed with `vars` as its data and the result is added as
 * `content`, so the soul writes it like core.file.present; the step keeps
 * only its wire params (the soul never receives the template or its vars).
 */
import * as path from 'node:path';
import { ScenarioError } from '../errors';
import type { LoadedService, Task } from '../model';
import { checkModuleParams, toWireParams } from '../modules';
import { resolveNode, type EvalEnv } from './resolve';
import { templateProblem } from '../check/params';
import { runTemplate } from '../template';
import { LineIndex } from '../yaml/line-index';
import { pair } from '../yaml/node';
import { checkServiceModuleParams, serviceModule } from '../load/modules';

export const RULE_TEMPLATE_EXEC = 'SL019';

/** `loopVars`: a loop item's `item` and `index`, which its template also sees beside `vars`. */
export function renderStepParams(
  service: LoadedService,
  task: Task,
  env: EvalEnv,
  loopVars?: Record<string, unknown>,
): Record<string, unknown> {
  const params = (task.params ? resolveNode(task.params, env) : {}) as Record<string, unknown>;
  const where = (name?: string) => (name && pair(task.params, name)?.value.pos) || task.params?.pos || task.pos;
  if (task.module === 'core.file.rendered') {
    if ('content' in params)
      throw new ScenarioError(
        where('content'),
        'SL010',
        'core.file.rendered: `content` is produced by rendering the template',
        'remove `content`, or use core.file.present',
      );
    if (typeof params['template'] === 'string') {
      const problem = templateProblem(service, params['template']);
      if (problem) throw new ScenarioError(where('template'), 'SL015', `${env.label}${problem.message}`, problem.fix);
      const t = service.templates.get(path.posix.normalize(params['template']))!;
      const vars = params['vars'] ?? {};
      const r = runTemplate(t.set!, loopVars && isMap(vars) ? { ...loopVars, ...vars } : vars);
      if (!r.ok) {
        const pos = new LineIndex(t.source, t.file).pos(r.offset);
        throw new ScenarioError(
          pos,
          RULE_TEMPLATE_EXEC,
          `${env.label}template error (task "${task.name}"): ${r.message}`,
          /no entry for key/.test(r.message)
            ? "pass the key in the task's `vars`, or guard it with {{ if }} / index"
            : 'fix the template or its vars',
        );
      }
      params['content'] = r.value;
    }
  }
  const shipped = serviceModule(service, task.module);
  for (const prob of (shipped ? checkServiceModuleParams(shipped, params) : checkModuleParams(task.module, params)) ??
    []) {
    throw new ScenarioError(
      where(prob.param),
      'SL010',
      `${env.label}${task.module}: ${prob.message}`,
      'fix the parameter value',
    );
  }
  return shipped ? params : toWireParams(task.module, params);
}

function isMap(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
