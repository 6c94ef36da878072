// A JSON-schema check without a schema compiler, for the schemas the soul itself checks: its
// configuration file (agent/config.ts) and the params of the steps it receives (the module
// contracts' wire schemas, scenario/modules). The soul starts on every host, and in push mode once
// per SSH dispatch; loading ajv and compiling those schemas was a quarter of `soul run`'s start-up
// and a third of a `soul apply` (docs/performance.md). This walks a schema instead. It knows the
// keywords those schemas use and answers in ajv's shape and words (`allErrors`), so the callers'
// messages are the same as with ajv; it refuses a schema with any other keyword, so that a schema
// cannot grow a rule nobody checks. common/schema-check.test.ts holds it to ajv's verdicts.
// Render and soul-lint, which check params against schemas with expressions and report them with
// positions, keep ajv.

type JsonType = 'object' | 'array' | 'string' | 'integer' | 'boolean' | 'null';

export interface Schema {
  type?: JsonType | readonly JsonType[];
  required?: readonly string[];
  additionalProperties?: false;
  properties?: Readonly<Record<string, Schema>>;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  contains?: Schema;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
}

const KNOWN = new Set([
  'type',
  'required',
  'additionalProperties',
  'properties',
  'items',
  'minItems',
  'maxItems',
  'contains',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
]);

/** A broken rule, shaped as ajv's ErrorObject: where (a JSON pointer), which keyword, its params, the words. */
export interface SchemaError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message: string;
}

const patterns = new Map<string, RegExp>();

/** Every rule `value` breaks; empty when it conforms. */
export function checkSchema(schema: Schema, value: unknown, instancePath = ''): SchemaError[] {
  for (const key of Object.keys(schema)) {
    if (!KNOWN.has(key)) throw new Error(`the schema uses "${key}", which common/schema-check.ts does not check`);
  }
  const errors: SchemaError[] = [];
  const say = (keyword: string, params: Record<string, unknown>, message: string) =>
    errors.push({ instancePath, keyword, params, message });
  if (schema.type !== undefined) {
    const types = typeof schema.type === 'string' ? [schema.type] : schema.type;
    if (!types.some((t) => isType(value, t))) {
      say('type', { type: typeof schema.type === 'string' ? schema.type : types }, `must be ${types.join(',')}`);
      return errors; // as ajv: the other rules are about a value of the right type
    }
  }
  if (isType(value, 'object')) {
    const obj = value as Record<string, unknown>;
    for (const key of schema.required ?? []) {
      if (!Object.hasOwn(obj, key)) say('required', { missingProperty: key }, `must have required property '${key}'`);
    }
    for (const key of Object.keys(obj)) {
      const sub = schema.properties && Object.hasOwn(schema.properties, key) ? schema.properties[key] : undefined;
      if (sub) errors.push(...checkSchema(sub, obj[key], `${instancePath}/${pointerToken(key)}`));
      else if (schema.additionalProperties === false)
        say('additionalProperties', { additionalProperty: key }, 'must NOT have additional properties');
    }
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems)
      say('minItems', { limit: schema.minItems }, `must NOT have fewer than ${schema.minItems} items`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems)
      say('maxItems', { limit: schema.maxItems }, `must NOT have more than ${schema.maxItems} items`);
    if (schema.items)
      value.forEach((item, i) => errors.push(...checkSchema(schema.items!, item, `${instancePath}/${i}`)));
    if (schema.contains && !value.some((item) => checkSchema(schema.contains!, item).length === 0)) {
      say('contains', { minContains: 1 }, 'must contain at least 1 valid item(s)');
    }
  }
  if (typeof value === 'string') {
    // Characters as ajv counts them: code points, not UTF-16 units.
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength)
      say('minLength', { limit: schema.minLength }, `must NOT have fewer than ${schema.minLength} characters`);
    if (schema.maxLength !== undefined && length > schema.maxLength)
      say('maxLength', { limit: schema.maxLength }, `must NOT have more than ${schema.maxLength} characters`);
    if (schema.pattern !== undefined && !regExp(schema.pattern).test(value))
      say('pattern', { pattern: schema.pattern }, `must match pattern "${schema.pattern}"`);
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum)
      say('minimum', { comparison: '>=', limit: schema.minimum }, `must be >= ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum)
      say('maximum', { comparison: '<=', limit: schema.maximum }, `must be <= ${schema.maximum}`);
  }
  return errors;
}

function regExp(pattern: string): RegExp {
  let r = patterns.get(pattern);
  if (!r) {
    r = new RegExp(pattern, 'u'); // as ajv compiles patterns
    patterns.set(pattern, r);
  }
  return r;
}

function isType(value: unknown, type: JsonType): boolean {
  switch (type) {
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
  }
}

/** A key as a JSON pointer token (RFC 6901), as ajv writes instancePath. */
function pointerToken(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
