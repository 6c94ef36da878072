import * as assert from 'node:assert/strict';
import { checkValue, schemaOf, schemaProblems } from './input-schema';

const upstreams = schemaOf({
  type: 'list',
  items: {
    type: 'map',
    required: ['host', 'port'],
    properties: {
      host: { type: 'string', pattern: '^[a-z0-9.-]+$' },
      port: { type: 'integer', minimum: 1, maximum: 65535 },
    },
  },
});

describe('input schemas that reach inside a value', function () {
  it('a list of maps that fits has no problem', function () {
    assert.deepEqual(
      checkValue(
        [
          { host: 'a', port: 1 },
          { host: 'b.example', port: 65535, weight: 3 },
        ],
        upstreams,
        'input.upstreams',
      ),
      [],
    );
  });

  it('an item without a required key is named by its path', function () {
    assert.deepEqual(
      checkValue([{ host: 'a', port: 1 }, { host: 'b', port: 2 }, { host: 'c' }], upstreams, 'input.upstreams'),
      [{ path: 'input.upstreams[2].port', message: 'input.upstreams[2].port is required' }],
    );
  });

  it('type, minimum, maximum and pattern inside items, each at its path', function () {
    const got = checkValue(
      [{ host: 'A_B', port: 0 }, { host: 'b', port: 70000 }, { host: 'c', port: '80' }, 'x'],
      upstreams,
      'input.upstreams',
    );
    assert.deepEqual(
      got.map((p) => p.message),
      [
        'input.upstreams[0].host does not match the pattern ^[a-z0-9.-]+$',
        'input.upstreams[0].port must be at least 1, got 0',
        'input.upstreams[1].port must be at most 65535, got 70000',
        'input.upstreams[2].port must be integer, got a string',
        'input.upstreams[3] must be map, got a string',
      ],
    );
  });

  it('enum; a key that is not a plain name is quoted in the path', function () {
    const s = schemaOf({ type: 'map', properties: { 'log-level': { type: 'string', enum: ['info', 'debug'] } } });
    assert.deepEqual(checkValue({ 'log-level': 'loud' }, s, 'input.opts'), [
      { path: 'input.opts["log-level"]', message: 'input.opts["log-level"] must be one of "info", "debug"' },
    ]);
    assert.deepEqual(checkValue({ 'log-level': 'debug' }, s, 'input.opts'), []);
  });

  it('a pattern mismatch does not quote the value back', function () {
    const [p] = checkValue('hunter2!', schemaOf({ type: 'string', pattern: '^[a-z]+$' }), 'input.token');
    assert.ok(p && !p.message.includes('hunter2'), p?.message);
  });

  it('mistakes in the schema itself are found at load', function () {
    const bad = schemaOf({
      type: 'integer',
      pattern: '^x$',
      enum: [1, 'two'],
      minimum: 5,
      maximum: 1,
      items: { type: 'string', pattern: '(' },
    });
    assert.deepEqual(
      schemaProblems(bad, 'input.n').map((p) => p.message.replace(/compile: .*/, 'compile')),
      [
        'input.n: `items` applies to a list only, not to integer',
        'input.n: `pattern` applies to a string only, not to integer',
        'input.n: minimum 5 is above maximum 1',
        'input.n: enum value "two" is a string, not integer',
        'input.n[]: pattern does not compile',
      ],
    );
    assert.deepEqual(schemaProblems(upstreams, 'input.upstreams'), []);
  });
});
