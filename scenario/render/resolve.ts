/**
 * Resolves YAML values at render time: every `${...}` in every string is
 * evaluated, a string that is one `${expr}` keeps the value's type, mixed
 * strings concatenate. A failure names the exact position of the expression.
 */
import type { YNode, YScalar } from '../yaml/parse';
import { splitInterpolation, wholeExpression } from '../interpolate';
import { compileExpression, type Program } from '../cel/program';
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
  const compiled = compiledFor(node, env.scope);
  const run = (part: CompiledExpr): unknown => {
    try {
      if (part.error) throw part.error;
      return part.program!(env.celContext);
    } catch (e) {
      if (e instanceof ExpressionError) {
        const rule =
          e.kind === 'syntax' ? 'SL011' : e.kind === 'name' ? 'SL012' : e.kind === 'type' ? 'SL022' : RULE_EVAL;
        throw new ScenarioError(posInScalar(node, part.offset + e.offset), rule, `${env.label}${e.message}`, fixFor(e));
      }
      throw e;
    }
  };
  if (compiled.whole) return run(compiled.whole);
  return compiled.parts.map((p) => (typeof p === 'string' ? p : interpolationText(run(p)))).join('');
}

interface CompiledExpr {
  offset: number;
  program?: Program;
  error?: ExpressionError;
}
interface CompiledString {
  whole?: CompiledExpr;
  parts: Array<string | CompiledExpr>;
}

// Splitting and compiling a string is done once per (scope, node), not once per host.
const memo = new WeakMap<Scope, WeakMap<YScalar, CompiledString>>();

function compiledFor(node: YScalar, scope: Scope): CompiledString {
  let byNode = memo.get(scope);
  if (!byNode) {
    byNode = new WeakMap();
    memo.set(scope, byNode);
  }
  const hit = byNode.get(node);
  if (hit) return hit;
  const split = splitInterpolation(node.text);
  if (!split.ok)
    throw new ScenarioError(posInScalar(node, split.offset), 'SL017', split.message, 'close the expression with `}`');
  const compile = (src: string, offset: number): CompiledExpr => {
    try {
      return { offset, program: compileExpression(src, scope) };
    } catch (e) {
      if (e instanceof ExpressionError) return { offset, error: e };
      throw e;
    }
  };
  const whole = wholeExpression(split.segments);
  const out: CompiledString = whole
    ? { whole: compile(whole.src, whole.offset), parts: [] }
    : { parts: split.segments.map((s) => (s.kind === 'text' ? s.text : compile(s.src, s.offset))) };
  byNode.set(node, out);
  return out;
}

export function fixFor(e: ExpressionError): string {
  if (/No such key/.test(e.message))
    return 'the value has no such key on this host or input; guard it with has(...) or fix the name';
  if (e.kind === 'syntax') return 'fix the CEL expression syntax';
  if (/exceeded its (cost|time) budget/.test(e.message))
    return 'make the expression do less work (smaller lists, fewer nested comprehensions); the budgets are in docs/scenario.md';
  return 'fix the expression or the data it reads';
}
