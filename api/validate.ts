// Request validation with ajv against the route's own schemas (the ones the OpenAPI document shows).
// Query strings are coerced (`?limit=10` is the integer 10, `?force=true` the boolean); bodies and
// path parameters are not. Every broken rule becomes one `{path, message}` entry naming the field
// (as /body/..., /query/..., /path/...) and the rule, in the schema's own words where it has them.
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { FieldError } from './problems';
import type { JsonSchema } from './schemas/common';

export type Location = 'body' | 'query' | 'path';

function createAjv(coerce: boolean): Ajv2020 {
  // verbose: errors carry their schema, so a pattern error can quote the rule's description.
  const ajv = new Ajv2020({ allErrors: true, verbose: true, strict: true, useDefaults: true, coerceTypes: coerce });
  addFormats(ajv);
  return ajv;
}

const strictAjv = createAjv(false);
const coercingAjv = createAjv(true);
const MAX_ERRORS = 20;

export function compileValidator(schema: JsonSchema, location: Location): ValidateFunction {
  return (location === 'query' ? coercingAjv : strictAjv).compile(schema);
}

const DECIMAL_INTEGER = /^-?(0|[1-9][0-9]{0,14})$/;

/**
 * Integers of a query are decimal integers written out, once (or, from a JSON caller such as an MCP
 * tool, a safe integer number). The schema's type coercion alone takes `1e309` and `Infinity` (as an
 * infinite number that then passes `maximum`), `0x10` or ` 5`, and an infinite `limit` silently
 * drops the database query's LIMIT.
 */
function integerErrors(schema: JsonSchema, query: Record<string, unknown>): FieldError[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const errors: FieldError[] = [];
  for (const [k, v] of Object.entries(query)) {
    if (!Object.hasOwn(properties, k) || properties[k].type !== 'integer') continue;
    if (Array.isArray(v)) errors.push({ path: `/query/${k}`, message: 'must be given once' });
    else if (typeof v === 'number' ? !Number.isSafeInteger(v) : typeof v !== 'string' || !DECIMAL_INTEGER.test(v)) {
      errors.push({ path: `/query/${k}`, message: 'must be a decimal integer (digits only)' });
    }
  }
  return errors;
}

/**
 * The one check of a route's query, for the REST call and the MCP tool that mirrors it alike: the
 * integer rule above, then the schema (coercing, filling defaults into `query`). Empty when valid.
 */
export function compileQueryValidator(schema: JsonSchema): (query: Record<string, unknown>) => FieldError[] {
  const v = compileValidator(schema, 'query');
  return (query) => {
    const integers = integerErrors(schema, query);
    if (integers.length > 0) return integers;
    return v(query) ? [] : fieldErrors('query', v.errors);
  };
}

function fieldPath(location: Location, e: ErrorObject): string {
  let p = e.instancePath;
  if (e.keyword === 'required') p += '/' + String(e.params.missingProperty);
  if (e.keyword === 'additionalProperties') p += '/' + String(e.params.additionalProperty);
  return `/${location}${p}`;
}

function describe(e: ErrorObject): string {
  const schema = (e.parentSchema ?? {}) as { description?: unknown };
  switch (e.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known field here';
    case 'pattern':
      return typeof schema.description === 'string'
        ? `must be ${schema.description}`
        : `must match ${String(e.params.pattern)}`;
    case 'enum':
      return `must be one of: ${(e.params.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'type':
      return `must be of type ${String(e.params.type)}`;
    case 'uniqueItems':
      return 'must not repeat an item';
    default:
      return e.message ?? `breaks the rule ${e.keyword}`;
  }
}

/** The field errors of the last failed validation, de-duplicated and capped. */
export function fieldErrors(location: Location, errors: ErrorObject[] | null | undefined): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of errors ?? []) {
    const fe = { path: fieldPath(location, e), message: describe(e) };
    const key = fe.path + '\u0000' + fe.message;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(fe);
    if (out.length === MAX_ERRORS) break;
  }
  return out;
}
