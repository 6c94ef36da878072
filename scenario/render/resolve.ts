/**
 * Resolves YAML values at render time: every `${...}` in every string is
 * evaluated, a string that is one `${expr}` keeps the value's type, mixed
 * strings concatenate. A failure names the exact position of the expression.
 */
import type { YNode } from '../yaml/parse';
import { splitInterpolation, wholeExpression } from '../interpolate';
import { compileExpression } from '../cel/program';
import type { Scope } from '../cel/env';
import { ExpressionError } from '../cel/evaluate';
import { interpolationText } from '../cel/values';
import { ScenarioError } from '../errors';
import { posInScalar } from '../check/positions';

export const RULE_EVAL = 'SL021';

export interface EvalEnv {
  scope: Scope;
  celContext: Record<string, unknown>;
  /** Prefix for messages, e.g. `on host web-1.example.com: `. */
  label: string;
}

export function resolveNode(node: YNode, env: EvalEnv): unknown {
  if (node.kind === 'seq') return node.items.map((n) => resolveNode(n, env));
  if (node.kind === 'map') {
    const out: Record<string, unknown> = {};
    for (const p of node.pairs) out[String(p.key.value)] = resolveNode(p.value, env);
    return out;
  }
  if (typeof node.value !== 'string' || !node.text.includes('${')) return node.value;
  const split = splitInterpolation(node.text);
  if (!split.ok) throw new ScenarioError(posInScalar(node, split.offset), 'SL017', split.message, 'close the expression with `}`');
  const run = (src: string, offset: number): unknown => {
    try {
      return compileExpression(src, env.scope)(env.celContext);
    } catch (e) {
      if (e instanceof ExpressionError) {
        const rule = e.kind === 'syntax' ? 'SL011' : e.kind === 'name' ? 'SL012' : e.kind === 'type' ? 'SL022' : RULE_EVAL;
        throw new ScenarioError(posInScalar(node, offset + e.offset), rule, `${env.label}${e.message}`, fixFor(e));
      }
      throw e;
    }
  };
  const whole = wholeExpression(split.segments);
  if (whole) return run(whole.src, whole.offset);
  return split.segments.map((s) => (s.kind === 'text' ? s.text : interpolationText(run(s.src, s.offset)))).join('');
}

export function fixFor(e: ExpressionError): string {
  if (/No such key/.test(e.message)) return 'the value has no such key on this host or input; guard it with has(...) or fix the name';
  if (e.kind === 'syntax') return 'fix the CEL expression syntax';
  return 'fix the expression or the data it reads';
}
