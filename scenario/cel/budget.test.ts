// The CEL evaluation budget: the review's cube bomb, a list doubled by cel.bind, and a refusal that
// cel-js would swallow all fail naming the budget and the expression; ordinary work over large facts
// stays within it, and a spent budget does not leak into the next evaluation.
import * as assert from 'node:assert/strict';
import { evaluateExpression, ExpressionError } from './evaluate';
import { compileExpression } from './program';
import { withBudget } from './budget';
import { scopeOf } from './evaluate';
import { toCel } from './values';
import { Environment } from '@marcbachmann/cel-js';
import { LIMITS } from '../limits';

const list150 = Array.from({ length: 150 }, (_, i) => i);
const CUBE = 'input.l.map(x, input.l.map(y, input.l.map(z, x + y + z))).size()';

function budgetError(fn: () => unknown): ExpressionError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ExpressionError, String(e));
    return e;
  }
  assert.fail('expected the budget to be spent');
}

describe('CEL evaluation budget', function () {
  it('stops the nested comprehension over 150 elements (cost: the cube of the list) with the cost budget', function () {
    const e = budgetError(() => evaluateExpression(CUBE, { input: { l: list150 } }));
    assert.equal(e.kind, 'eval');
    assert.match(e.message, new RegExp(`exceeded its cost budget of ${LIMITS.maxExpressionCost} units`));
    assert.ok(e.message.includes('input.l.map(x, input.l.map(y'), `the message names the expression: ${e.message}`);
  });

  it('stops it in a compiled program too (the render path)', function () {
    const ctx = { input: { l: list150 } };
    const program = compileExpression(CUBE, scopeOf(ctx));
    const e = budgetError(() => program({ input: toCel(ctx.input) }));
    assert.match(e.message, /cost budget/);
  });

  it('counts the lists a concatenation builds: a list doubled at every cel.bind level is stopped', function () {
    let src = 'd0.size()';
    for (let i = 1; i <= 30; i++) src = `cel.bind(d${i - 1}, d${i} + d${i}, ${src})`;
    src = `cel.bind(d30, input.l, ${src})`;
    const e = budgetError(() => evaluateExpression(src, { input: { l: list150 } }));
    assert.match(e.message, /cost budget/);
  });

  it('a refusal swallowed by `||` or `exists` still fails the expression', function () {
    for (const src of [
      `${CUBE} > 0 || true`,
      'input.l.exists(x, input.l.map(y, input.l.map(z, y + z)).size() < 0) || true',
    ]) {
      assert.match(budgetError(() => evaluateExpression(src, { input: { l: list150 } })).message, /cost budget/, src);
    }
  });

  it('stops on the wall clock when the cost budget is not reached first', function () {
    const env = new Environment({ unlistedVariablesAreDyn: true });
    const l = list150.map(BigInt);
    assert.throws(
      () => withBudget(() => env.evaluate('l.map(x, l.map(y, x + y)).size()', { l }), { maxUnits: 1e12, maxMillis: 0 }),
      /exceeded its time budget of 0 ms/,
    );
  });

  it('ordinary work over large facts stays within the budget, and a spent budget does not outlive its evaluation', function () {
    const packages = Array.from({ length: 5000 }, (_, i) => ({ name: `pkg-${i}`, version: '1.0' }));
    const ctx = { input: { l: list150 }, soulprint: { self: { packages } } };
    budgetError(() => evaluateExpression(CUBE, ctx));
    assert.equal(evaluateExpression('soulprint.self.packages.exists(p, p.name == "pkg-4999")', ctx), true);
    assert.equal(evaluateExpression('soulprint.self.packages.filter(p, p.name.startsWith("pkg-49")).size()', ctx), 111);
    assert.equal(
      evaluateExpression('input.l.map(x, input.l.map(y, x * y)).size()', ctx),
      150,
      'the square of 150 is fine',
    );
  });
});
