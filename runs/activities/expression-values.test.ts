import assert from 'node:assert/strict';
import { expressionValues } from './expression-values';

describe('expressionValues: the values an apply-time expression read', () => {
  const ctx: Record<string, unknown> = {
    'input.broken': true,
    'result.ok': true,
    'conf.output': 'x'.repeat(300),
    'result.changed': 1n,
  };
  const lookup = (p: string) => {
    if (!(p in ctx)) throw new Error(`No such key: ${p}`);
    return ctx[p];
  };

  it('names each dotted path once, with its value, in source order', () => {
    assert.equal(
      expressionValues('input.broken && result.ok || input.broken', lookup),
      'input.broken = true, result.ok = true',
    );
  });
  it('ignores text inside string literals and paths that do not resolve; shortens long values', () => {
    const out = expressionValues(
      'conf.output.contains("input.broken") && missing.key == \'a.b\' && result.changed > 0',
      lookup,
    );
    assert.match(out, /^conf\.output = "x{119}…, result\.changed = 1$/);
  });
});
