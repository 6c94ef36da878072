/**
 * Compiled expressions for render: each (scope, source) pair is checked and
 * parsed once, then evaluated per host against a context already converted
 * to CEL values. This is what keeps a 1,000-host render fast.
 */
import { checkExpression, environmentFor, scopeKeyOf, summary, type Scope } from './env';
import { ExpressionError, evaluationError } from './evaluate';
import { withBudget, type Budget } from './budget';
import { fromCel } from './values';

/** Evaluates the expression against a context of CEL values, under `budget` (LIMITS by default). */
export type Program = (celContext: Record<string, unknown>, budget?: Budget) => unknown;

const cache = new Map<string, Program>();
const scopeKeys = new WeakMap<Scope, string>();

function scopeKey(scope: Scope): string {
  let k = scopeKeys.get(scope);
  if (k === undefined) {
    k = scopeKeyOf(scope);
    scopeKeys.set(scope, k);
  }
  return k;
}

export function compileExpression(src: string, scope: Scope): Program {
  const key = `${scopeKey(scope)}\u0000${src}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const problem = checkExpression(src, scope);
  if (problem) throw new ExpressionError(problem.message, problem.offset, problem.kind);
  const parsed = environmentFor(scope).parse(src);
  const program: Program = (ctx, budget) => {
    let v: unknown;
    try {
      v = withBudget(() => parsed(ctx), budget);
    } catch (e) {
      throw evaluationError(e, src);
    }
    try {
      return fromCel(v);
    } catch (e) {
      throw new ExpressionError(`CEL evaluation error: ${summary(e)}`, 0, 'eval');
    }
  };
  if (cache.size > 10_000) cache.clear();
  cache.set(key, program);
  return program;
}
