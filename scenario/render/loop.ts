/**
 * `loop:` at render: the task's list, per host, and the context each item's step sees. The list is
 * a CEL expression or a YAML list (its strings interpolated), evaluated with what `params` see
 * (input, state, soulprint.self; never a registered result, which does not exist before the run).
 * Every item becomes one step; `item` (Ansible's name) and `index` (its position from 0: Ansible's
 * `loop_control.index_var`, Jinja's `loop.index0`; `loop` itself is a reserved word of CEL) are
 * readable in its `params`, `when` and template.
 */
import { ScenarioError } from '../errors';
import { LIMITS } from '../limits';
import type { Task } from '../model';
import { toCel } from '../cel/values';
import { describeValue } from '../inputs';
import { resolveNode, type EvalEnv } from './resolve';

export const RULE_LOOP = 'SL022';

/** The items of a task's loop on one host; an error (at the loop's position) when it is no list. */
export function loopItems(
  task: Task,
  env: EvalEnv,
  evalExpr: (e: NonNullable<Task['when']>, env: EvalEnv) => unknown,
): unknown[] {
  const loop = task.loop!;
  const value = loop.kind === 'list' ? resolveNode(loop.node, env) : evalExpr(loop.expr, env);
  if (!Array.isArray(value)) {
    throw new ScenarioError(
      loop.pos,
      RULE_LOOP,
      `${env.label}loop of task "${task.name}" must give a list, it gave ${describeValue(value)}`,
      'give `loop:` a list: a YAML list, or an expression such as input.names or [1, 2, 3]',
    );
  }
  if (value.length > LIMITS.maxLoopItems) {
    throw new ScenarioError(
      loop.pos,
      RULE_LOOP,
      `${env.label}loop of task "${task.name}" has ${value.length} items, over the limit of ${LIMITS.maxLoopItems}`,
      'split the list or the task',
    );
  }
  return value;
}

/** The environment of one item's step: the host's, with `item` and `index` declared and set. */
export function itemEnv(env: EvalEnv, loopScope: EvalEnv['scope'], item: unknown, index: number): EvalEnv {
  return {
    scope: loopScope,
    celContext: { ...env.celContext, item: toCel(item), index: toCel(index) },
    label: env.label,
  };
}
