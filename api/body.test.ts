import assert from 'node:assert/strict';
import { ApiProblem } from './problems';
import { MAX_JSON_DEPTH, checkJsonContentType, jsonDepthExceeds, parseJsonBody } from './body';

function status(fn: () => unknown): number | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err instanceof ApiProblem ? err.status : -1;
  }
}

describe('api/body: hardened JSON bodies', () => {
  it('counts nesting of arrays and objects but not brackets inside strings', () => {
    assert.equal(jsonDepthExceeds('[[[]]]', 3), false);
    assert.equal(jsonDepthExceeds('[[[[]]]]', 3), true);
    assert.equal(jsonDepthExceeds('{"a":"[[[[[[[[[[[[[[["}', 1), false);
    assert.equal(jsonDepthExceeds('{"a":"\\"[[[["}', 1), false, 'an escaped quote does not end the string');
  });

  it('refuses a body nested deeper than the limit with 400, before parsing it', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    assert.equal(
      status(() => parseJsonBody(Buffer.from(deep))),
      400,
    );
    const ok = '['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH);
    assert.deepEqual(
      status(() => parseJsonBody(Buffer.from(ok))),
      undefined,
    );
  });

  it('answers 400 for invalid JSON and for bytes that are not UTF-8', () => {
    assert.equal(
      status(() => parseJsonBody(Buffer.from('{"a":'))),
      400,
    );
    assert.equal(
      status(() => parseJsonBody(Buffer.from([0x7b, 0xff, 0x7d]))),
      400,
    );
    assert.equal(parseJsonBody(Buffer.alloc(0)), undefined);
  });

  it('accepts application/json (with UTF-8 charset) and +json types, and answers 415 for anything else', () => {
    assert.equal(
      status(() => checkJsonContentType('application/json')),
      undefined,
    );
    assert.equal(
      status(() => checkJsonContentType('Application/JSON; charset=UTF-8')),
      undefined,
    );
    assert.equal(
      status(() => checkJsonContentType('application/merge-patch+json')),
      undefined,
    );
    assert.equal(
      status(() => checkJsonContentType('text/plain')),
      415,
    );
    assert.equal(
      status(() => checkJsonContentType('application/x-www-form-urlencoded')),
      415,
    );
    assert.equal(
      status(() => checkJsonContentType('application/json; charset=latin1')),
      415,
    );
    assert.equal(
      status(() => checkJsonContentType(undefined)),
      415,
    );
  });
});
