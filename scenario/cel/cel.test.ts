import * as assert from 'node:assert/strict';
import { evaluateExpression, ExpressionError } from './evaluate';
import { checkExpression } from './env';

function err(fn: () => unknown): ExpressionError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ExpressionError, String(e));
    return e;
  }
  assert.fail('expected an expression error');
}

describe('CEL expressions', function () {
  const ctx = {
    input: { port: 8080, name: 'web', ratio: 0.5, tags: ['a', 'b'] },
    state: { n: 2 },
    soulprint: { self: { os: 'debian', cpus: 4 } },
  };

  it('evaluates with int/double kept apart and returns plain numbers', function () {
    assert.equal(evaluateExpression('input.port + 1', ctx), 8081);
    assert.equal(evaluateExpression('input.ratio * 2.0', ctx), 1);
    assert.equal(evaluateExpression('soulprint.self.cpus > 2 && input.name == "web"', ctx), true);
    assert.deepEqual(evaluateExpression('input.tags.map(t, t + "!")', ctx), ['a!', 'b!']);
    assert.equal(evaluateExpression('state.n * 10', ctx), 20);
  });

  it('a missing key is an error, never an empty value', function () {
    const e = err(() => evaluateExpression('soulprint.self.missing', ctx));
    assert.equal(e.kind, 'eval');
    assert.match(e.message, /No such key: missing/);
    assert.equal(e.offset, 15);
  });

  it('an undeclared input is caught before evaluation', function () {
    const e = err(() => evaluateExpression('input.prot', ctx));
    assert.equal(e.kind, 'name');
    assert.match(e.message, /No such key: prot/);
  });

  it('an unknown variable is a name error', function () {
    const e = err(() => evaluateExpression('nope.x', ctx));
    assert.equal(e.kind, 'name');
    assert.match(e.message, /Unknown variable: nope/);
    assert.equal(e.offset, 0);
  });

  it('a bare soulprint.<path> is refused with its offset', function () {
    const e = err(() => evaluateExpression('1 == 1 && soulprint.os == "x"', ctx));
    assert.equal(e.kind, 'name');
    assert.match(e.message, /soulprint\.self/);
    assert.equal(e.offset, 10);
  });

  it('reports syntax errors with their offset', function () {
    const p = checkExpression('input.port >', {
      inputs: new Map([['port', 'integer']]),
      soulprint: false,
      state: false,
      registered: [],
      result: false,
    });
    assert.equal(p?.kind, 'syntax');
    assert.equal(p?.offset, 12);
  });

  it('registered results are readable only when declared in scope', function () {
    assert.equal(evaluateExpression('web.changed', { ...ctx, web: { changed: true } }), true);
    assert.equal(err(() => evaluateExpression('web.changed', ctx)).kind, 'name');
  });

  it('refuses over-long expressions', function () {
    assert.equal(err(() => evaluateExpression('1 + '.repeat(2000) + '1', ctx)).kind, 'syntax');
  });
});
