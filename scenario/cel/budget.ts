/**
 * The evaluation budget of one CEL expression: a cost budget (deterministic) and a wall-clock budget
 * (a backstop), as templates have (scenario/limits.ts). cel-js bounds only the parsed expression
 * (AST nodes, depth, literal sizes), not its evaluation, so a nested comprehension over a 150-element
 * list (cost growing with the cube of the list) or a `cel.bind` that doubles a list at every level
 * runs as long as it likes on the keeper's one thread.
 *
 * Every node cel-js evaluates below the root goes through its evaluator's `run` (operators, macro
 * steps, each comprehension iteration), so the meter sits there: one unit per node evaluated, plus
 * the size of every list, map or string a concatenation, call or literal produces (copying a list
 * is work proportional to it; a doubled list is caught after a few doublings, not after memory runs
 * out). The evaluator class is not exported; it is taken from a probe evaluation once, and its `run`
 * is wrapped so that it costs one comparison when no budgeted evaluation is in progress.
 *
 * Once over budget every further `run` throws, so a branch that swallows errors (`||`, `exists`)
 * cannot turn the refusal into a value, and the caller checks the meter again after the result.
 */
import { Environment } from '@marcbachmann/cel-js';
import { LIMITS } from '../limits';

export class CelBudgetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CelBudgetError';
  }
}

interface Meter {
  units: number;
  maxUnits: number;
  deadline: number;
  maxMillis: number;
  over: string | null;
}

let meter: Meter | null = null;

type RunFn = (this: unknown, ast: { op: string }, ctx: unknown) => unknown;

// Nodes whose value is built by the node itself (not read from the context or an accumulator): their
// size is work done and memory taken. A comprehension's result is counted by its iterations.
const BUILDS = new Set(['+', 'call', 'rcall', 'list', 'map']);

function sizeOf(v: unknown): number {
  if (typeof v === 'string') return v.length >>> 6; // copying text is cheap; 64 characters a unit
  if (Array.isArray(v)) return v.length;
  if (v instanceof Map || v instanceof Set) return v.size;
  return 0;
}

function overBudget(m: Meter): never {
  throw new CelBudgetError(m.over!);
}

function install(): void {
  const probe = new Environment({}).parse('1') as unknown as {
    (): unknown;
    ast: { evaluate: (ev: object) => unknown };
  };
  let evaluator: object | undefined;
  probe.ast.evaluate = (ev: object) => {
    evaluator = ev;
    return 1n;
  };
  probe();
  const proto = evaluator && (Object.getPrototypeOf(evaluator) as { run?: RunFn });
  if (!proto || typeof proto.run !== 'function') {
    // A cel-js that no longer evaluates through `run` must not be used without a budget.
    throw new Error('cel-js evaluator has no run method: the CEL evaluation budget cannot be installed');
  }
  const original = proto.run;
  proto.run = function budgetedRun(ast, ctx) {
    const m = meter;
    if (m === null) return original.call(this, ast, ctx);
    if (m.over !== null) overBudget(m);
    if (++m.units > m.maxUnits) {
      m.over = `expression exceeded its cost budget of ${m.maxUnits} units`;
      overBudget(m);
    }
    if ((m.units & 1023) === 0 && performance.now() > m.deadline) {
      m.over = `expression exceeded its time budget of ${m.maxMillis} ms`;
      overBudget(m);
    }
    const v = original.call(this, ast, ctx);
    if (BUILDS.has(ast.op)) {
      m.units += sizeOf(v);
      if (m.units > m.maxUnits) {
        m.over = `expression exceeded its cost budget of ${m.maxUnits} units`;
        overBudget(m);
      }
    }
    return v;
  };
}

install();

/**
 * Charges `units` of work done outside cel-js's node walk (one `matches` call: regex.ts) to the
 * evaluation in progress, before the work is done; throws CelBudgetError when that spends the budget.
 * Outside a budgeted evaluation it charges nothing.
 */
export function charge(units: number): void {
  const m = meter;
  if (m === null) return;
  if (m.over !== null) overBudget(m);
  m.units += units;
  if (m.units > m.maxUnits) {
    m.over = `expression exceeded its cost budget of ${m.maxUnits} units`;
    overBudget(m);
  }
}

export interface Budget {
  maxUnits?: number;
  maxMillis?: number;
}

/**
 * Runs `evaluate` (one cel-js evaluation) under a budget; throws CelBudgetError when it is spent,
 * even if cel-js swallowed the refusal on the way out.
 */
export function withBudget<T>(evaluate: () => T, budget: Budget = {}): T {
  const maxMillis = budget.maxMillis ?? LIMITS.maxExpressionMillis;
  const m: Meter = {
    units: 0,
    maxUnits: budget.maxUnits ?? LIMITS.maxExpressionCost,
    deadline: performance.now() + maxMillis,
    maxMillis,
    over: null,
  };
  const outer = meter;
  meter = m;
  try {
    const v = evaluate();
    if (m.over !== null) overBudget(m);
    return v;
  } finally {
    meter = outer;
  }
}
