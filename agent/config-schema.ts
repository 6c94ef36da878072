// The check of the soul's configuration against its JSON schema, without a schema compiler. The soul
// reads one small file when it starts; loading ajv and compiling this schema took a quarter of `soul
// run`'s start-up and of every `soul apply` an SSH dispatch starts (docs/performance.md). This walks
// the schema instead: it knows the keywords the soul's schema uses, with ajv's wording (`allErrors`),
// and refuses a schema with any other keyword, so that the schema cannot grow a rule that is not
// checked. agent/config-schema.test.ts holds it to ajv's verdicts on many broken configurations.

type JsonType = 'object' | 'array' | 'string' | 'integer' | 'null';

export interface Schema {
  type?: JsonType | readonly JsonType[];
  required?: readonly string[];
  additionalProperties?: false;
  properties?: Readonly<Record<string, Schema>>;
  items?: Schema;
  minItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
}

const KNOWN = new Set(['type', 'required', 'additionalProperties', 'properties', 'items', 'minItems', 'minLength', 'maxLength', 'minimum', 'maximum']);

/** A broken rule: where (`a.b.0.c`, empty at the top) and what, in ajv's words. */
export interface SchemaProblem { at: string; message: string }

/** Every rule `value` breaks, in document order; empty when it conforms. */
export function schemaProblems(schema: Schema, value: unknown, at = ''): SchemaProblem[] {
  for (const key of Object.keys(schema)) {
    if (!KNOWN.has(key)) throw new Error(`the soul's configuration schema uses "${key}", which agent/config-schema.ts does not check`);
  }
  const problems: SchemaProblem[] = [];
  const say = (message: string, where = at) => problems.push({ at: where, message });
  if (schema.type !== undefined) {
    const types = typeof schema.type === 'string' ? [schema.type] : schema.type;
    if (!types.some((t) => isType(value, t))) {
      say(`must be ${types.join(',')}`);
      return problems; // as ajv: the other rules are about a value of the right type
    }
  }
  if (isType(value, 'object')) {
    const obj = value as Record<string, unknown>;
    for (const key of schema.required ?? []) {
      if (!(key in obj)) say(`must have required property '${key}'`);
    }
    for (const key of Object.keys(obj)) {
      const sub = schema.properties?.[key];
      if (sub) problems.push(...schemaProblems(sub, obj[key], join(at, key)));
      else if (schema.additionalProperties === false) say(`must NOT have additional properties (${key})`);
    }
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) say(`must NOT have fewer than ${schema.minItems} items`);
    if (schema.items) value.forEach((item, i) => problems.push(...schemaProblems(schema.items!, item, join(at, String(i)))));
  }
  if (typeof value === 'string') {
    // Characters as ajv counts them: code points, not UTF-16 units.
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength) say(`must NOT have fewer than ${schema.minLength} characters`);
    if (schema.maxLength !== undefined && length > schema.maxLength) say(`must NOT have more than ${schema.maxLength} characters`);
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) say(`must be >= ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) say(`must be <= ${schema.maximum}`);
  }
  return problems;
}

function isType(value: unknown, type: JsonType): boolean {
  switch (type) {
    case 'object': return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'array': return Array.isArray(value);
    case 'string': return typeof value === 'string';
    case 'integer': return typeof value === 'number' && Number.isInteger(value);
    case 'null': return value === null;
  }
}

function join(at: string, key: string): string {
  return at === '' ? key : `${at}.${key}`;
}
