/**
 * Offline checks of expressions: whole-string expression keys (`when:` ...)
 * and `${...}` inside YAML strings. Syntax (SL011), undeclared names and the
 * soulprint.self rule (SL012), types (SL022), interpolation syntax (SL017).
 */
import { checkExpression, type Scope } from '../cel/env';
import { makeError, type RenderError } from '../errors';
import { splitInterpolation } from '../interpolate';
import type { ExprSource } from '../model';
import type { YNode, YScalar } from '../yaml/parse';
import { posInScalar } from './positions';
import { environmentFor } from '../cel/env';

export const EXPR_RULES = { syntax: 'SL011', name: 'SL012', type: 'SL022', interpolation: 'SL017' } as const;

export interface ScopeInfo {
  scope: Scope;
  /** Names registered by tasks, to explain why one is not readable here. */
  allRegistered: string[];
  /** Where this expression is evaluated, for messages. */
  where: string;
}

function problemToError(
  node: YScalar,
  offset: number,
  p: { offset: number; message: string; kind: string },
  info: ScopeInfo,
  src: string,
): RenderError {
  const pos = posInScalar(node, offset + p.offset);
  if (p.kind === 'syntax') return makeError(pos, EXPR_RULES.syntax, p.message, 'fix the CEL expression syntax');
  if (p.kind === 'name') {
    const unknown = /Unknown variable: (\w+)|No such key: (\w+)/.exec(p.message);
    const name = unknown?.[1] ?? unknown?.[2];
    let fix = 'read inputs as input.<name>, host facts as soulprint.self.<path>, state as state.<key>';
    if (unknown?.[2] && /\binput\b/.test(src))
      fix = `declare "${name}" under \`input:\` in the scenario, or fix the spelling`;
    if (name && unknown?.[1] && info.allRegistered.includes(name)) {
      // In an apply-time key, the name is known but registered by this task or a later one.
      fix =
        /when|until/.test(info.where) && !/where/.test(info.where)
          ? `"${name}" is registered by this task or a later one: a task reads only results registered before it; move the registering task up`
          : `"${name}" is a registered result: it can be read only by a later task's when/changed_when/failed_when/until, not ${info.where}`;
    }
    if (/soulprint\.self/.test(p.message)) fix = 'write soulprint.self.<path>';
    return makeError(pos, EXPR_RULES.name, p.message, fix);
  }
  return makeError(pos, EXPR_RULES.type, p.message, 'fix the types in the expression');
}

/** A whole-string expression key; `wantBool` also checks that it is a boolean. */
export function checkExprSource(e: ExprSource, info: ScopeInfo, wantBool: boolean): RenderError[] {
  const p = checkExpression(e.src, info.scope);
  if (p) return [problemToError(e.node, 0, p, info, e.src)];
  if (wantBool && e.node.value !== true && e.node.value !== false) {
    const t = environmentFor(info.scope).check(e.src).type;
    if (t && t !== 'bool' && t !== 'dyn') {
      return [
        makeError(
          e.pos,
          EXPR_RULES.type,
          `expression must be a boolean, but it is ${t}`,
          'compare the value, e.g. `x == "y"`',
        ),
      ];
    }
  }
  return [];
}

/** Every `${...}` in every string under `node` (keys are not interpolated). */
export function checkInterpolations(node: YNode | undefined, info: ScopeInfo): RenderError[] {
  if (!node) return [];
  if (node.kind === 'seq') return node.items.flatMap((n) => checkInterpolations(n, info));
  if (node.kind === 'map') return node.pairs.flatMap((p) => checkInterpolations(p.value, info));
  if (typeof node.value !== 'string' || !node.text.includes('${')) return [];
  const split = splitInterpolation(node.text);
  if (!split.ok)
    return [
      makeError(
        posInScalar(node, split.offset),
        EXPR_RULES.interpolation,
        split.message,
        'close the expression with `}` (write `$${` for a literal `${`)',
      ),
    ];
  const out: RenderError[] = [];
  for (const seg of split.segments) {
    if (seg.kind !== 'expr') continue;
    const p = checkExpression(seg.src, info.scope);
    if (p) out.push(problemToError(node, seg.offset, p, info, seg.src));
  }
  return out;
}
