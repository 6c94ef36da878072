import assert from 'node:assert/strict';
import { checkSchema, type Schema } from './schema-check';

// Its agreement with ajv is tested where it is used: agent/config-check.test.ts (the soul's
// configuration) and scenario/modules/wire-check.test.ts (the params of steps).
describe('the schema check without a compiler', () => {
  it('refuses a schema keyword it does not check, rather than ignoring the rule', () => {
    const schema = { type: 'string', enum: ['a'] } as unknown as Schema;
    assert.throws(() => checkSchema(schema, 'b'), /uses "enum", which common\/schema-check.ts does not check/);
    assert.throws(
      () => checkSchema({ type: 'object', properties: { a: { format: 'uri' } as unknown as Schema } }, { a: 'x' }),
      /uses "format"/,
    );
  });

  it('reports every broken rule with its place, not only the first', () => {
    const schema: Schema = {
      type: 'object',
      required: ['a'],
      additionalProperties: false,
      properties: { b: { type: 'array', items: { type: 'integer', minimum: 1 } } },
    };
    assert.deepEqual(
      checkSchema(schema, { b: [1, 0, 'x'], c: true }).map((e) => `${e.instancePath} ${e.keyword}`),
      [' required', '/b/1 minimum', '/b/2 type', ' additionalProperties'],
    );
  });
});
