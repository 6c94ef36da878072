/**
 * Evaluating one CEL expression against plain values. The context is the
 * one expressions see: `input`, `state`, `soulprint` (`{self: facts}`),
 * registered results and `result`. Every name the context holds is declared
 * as `dyn`-like maps except `input`, whose fields are declared when the
 * caller passes input types.
 */
import { environmentFor, summary, rangeStart, checkExpression, type InputType, type Scope } from './env';
import { toCel, fromCel } from './values';
import { CelBudgetError, withBudget } from './budget';
import { CelRegexError } from './regex';

export interface ExpressionContext {
  input?: Record<string, unknown>;
  state?: Record<string, unknown>;
  soulprint?: { self: Record<string, unknown> };
  /** Registered results by name, and `result` for the current step. */
  [name: string]: unknown;
}

export class ExpressionError extends Error {
  constructor(
    message: string,
    readonly offset: number,
    readonly kind: 'syntax' | 'name' | 'type' | 'eval',
    /**
     * The expression itself is refused, whatever the context: a spent budget, or a `matches` pattern
     * or string over its limit or not RE2. A fact query answers it as the caller's error instead of
     * "this host does not match".
     */
    readonly refused = false,
  ) {
    super(message);
    this.name = 'ExpressionError';
  }
}

/**
 * For a spent budget, the message naming the expression (its first 80 characters): the render error
 * adds the file, line and column.
 */
export function budgetProblem(e: unknown): ((src: string) => string) | null {
  if (!(e instanceof CelBudgetError)) return null;
  return (src) => {
    const text = src.replace(/\s+/g, ' ').trim();
    return `CEL ${e.message}: \`${text.length > 80 ? text.slice(0, 79) + '…' : text}\``;
  };
}

/** The ExpressionError for what an evaluation of `src` threw. */
export function evaluationError(e: unknown, src: string): ExpressionError {
  const budget = budgetProblem(e);
  if (budget) return new ExpressionError(budget(src), 0, 'eval', true);
  if (e instanceof CelRegexError) return new ExpressionError(`CEL evaluation error: ${e.message}`, 0, 'eval', true);
  return new ExpressionError(`CEL evaluation error: ${summary(e)}`, rangeStart(e), 'eval');
}

/** Infers input types from values when no declarations are given (helper use, tests, the soul). */
function inferInputs(input: Record<string, unknown> | undefined): Map<string, InputType> {
  const out = new Map<string, InputType>();
  for (const [k, v] of Object.entries(input ?? {})) {
    out.set(
      k,
      typeof v === 'string'
        ? 'string'
        : typeof v === 'boolean'
          ? 'boolean'
          : typeof v === 'number'
            ? Number.isInteger(v)
              ? 'integer'
              : 'number'
            : Array.isArray(v)
              ? 'list'
              : 'map',
    );
  }
  return out;
}

export function scopeOf(context: ExpressionContext, inputTypes?: Map<string, InputType>): Scope {
  // `item` and `index` are a looped step's own (docs/scenario.md "loop"), never registered names.
  const reserved = new Set(['input', 'state', 'soulprint', 'result', 'item', 'index']);
  const registered = Object.keys(context)
    .filter((k) => !reserved.has(k))
    .sort();
  const lists = registered.filter((k) => Array.isArray(context[k]));
  return {
    inputs: inputTypes ?? inferInputs(context.input),
    soulprint: context.soulprint !== undefined,
    state: context.state !== undefined,
    registered,
    result: context.result !== undefined,
    ...('item' in context ? { loop: true } : {}),
    ...(lists.length ? { lists } : {}),
  };
}

/**
 * Evaluates `src` and returns a plain value (ints as numbers). Throws
 * ExpressionError with the offset of the problem in `src`.
 */
export function evaluateExpression(
  src: string,
  context: ExpressionContext,
  inputTypes?: Map<string, InputType>,
): unknown {
  const scope = scopeOf(context, inputTypes);
  const problem = checkExpression(src, scope);
  if (problem) throw new ExpressionError(problem.message, problem.offset, problem.kind);
  const env = environmentFor(scope);
  const celContext: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(context)) if (v !== undefined) celContext[k] = toCel(v);
  if (!('input' in celContext)) celContext['input'] = {};
  let value: unknown;
  try {
    value = withBudget(() => env.evaluate(src, celContext));
  } catch (e) {
    throw evaluationError(e, src);
  }
  try {
    return fromCel(value);
  } catch (e) {
    throw new ExpressionError(`CEL evaluation error: ${summary(e)}`, 0, 'eval');
  }
}
