import * as assert from 'node:assert/strict';
import { splitInterpolation, wholeExpression } from './interpolate';

describe('${} interpolation', function () {
  it('splits text and expressions with their offsets', function () {
    const r = splitInterpolation('a ${input.x} b ${ {"k": "}"}.k }');
    assert.ok(r.ok);
    assert.deepEqual(r.segments, [
      { kind: 'text', text: 'a ' },
      { kind: 'expr', src: 'input.x', offset: 4 },
      { kind: 'text', text: ' b ' },
      { kind: 'expr', src: ' {"k": "}"}.k ', offset: 17 },
    ]);
  });

  it('a string that is one ${} is a whole expression (keeps its type)', function () {
    const r = splitInterpolation('${input.port}');
    assert.ok(r.ok && wholeExpression(r.segments));
    const mixed = splitInterpolation('port ${input.port}');
    assert.ok(mixed.ok && !wholeExpression(mixed.segments));
  });

  it('$${ is a literal ${', function () {
    const r = splitInterpolation('cost: $${HOME}');
    assert.ok(r.ok);
    assert.deepEqual(r.segments, [{ kind: 'text', text: 'cost: ${HOME}' }]);
  });

  it('an unterminated or empty ${ is an error at the marker', function () {
    assert.deepEqual(splitInterpolation('x ${input.a'), {
      ok: false,
      offset: 2,
      message: 'unterminated `${`: no matching `}`',
    });
    assert.deepEqual(splitInterpolation('${ }'), { ok: false, offset: 0, message: 'empty `${}` expression' });
  });
});
