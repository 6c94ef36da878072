/**
 * Input schemas that reach inside a value (issue 30): `items` for a list, `properties`/`required`
 * for a map, `enum`, `minimum`/`maximum`, `pattern`. A list of upstreams whose third item has no
 * `port` is refused before the run starts, naming `input.upstreams[2].port`, instead of passing
 * the up-front check and locking the incarnation at render. The keywords are the JSON Schema ones
 * a service author already knows; only these are read, and the loader's JSON schema refuses others.
 */
import type { InputType } from './cel/env';
import { describeValue, matchesType } from './inputs';
import type { ValueSchema } from './model';

export interface ValueProblem {
  path: string;
  message: string;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** `input.upstreams[2].port`: the path an operator reads, and the one the API's 400 names. */
export const childPath = (parent: string, key: string | number) =>
  typeof key === 'number'
    ? `${parent}[${key}]`
    : NAME.test(key)
      ? `${parent}.${key}`
      : `${parent}[${JSON.stringify(key)}]`;

/** The declaration's schema part as the YAML gives it (already shape-checked by the loader's JSON schema). */
export function schemaOf(decl: Record<string, unknown>): ValueSchema {
  const out: ValueSchema = { type: decl.type as InputType };
  if (decl.items && typeof decl.items === 'object') out.items = schemaOf(decl.items as Record<string, unknown>);
  if (decl.properties && typeof decl.properties === 'object') {
    out.properties = Object.fromEntries(
      Object.entries(decl.properties as Record<string, Record<string, unknown>>).map(([k, v]) => [k, schemaOf(v)]),
    );
  }
  for (const k of ['required', 'enum'] as const) if (Array.isArray(decl[k])) out[k] = decl[k] as never;
  for (const k of ['minimum', 'maximum'] as const) if (typeof decl[k] === 'number') out[k] = decl[k] as number;
  if (typeof decl.pattern === 'string') out.pattern = decl.pattern;
  return out;
}

/** Whether the schema says more than its type (a plain `{type}` needs no walk and shows nothing new). */
export const reachesInside = (s: ValueSchema) => Object.keys(s).some((k) => k !== 'type');

/**
 * Mistakes in the schema itself, found when the service loads: a keyword that cannot apply to the
 * type (a `pattern` on an integer would never be checked), a pattern that does not compile, an
 * `enum` value of another type, `minimum` above `maximum`.
 */
export function schemaProblems(s: ValueSchema, path: string): ValueProblem[] {
  const out: ValueProblem[] = [];
  const wrong = (k: string, types: string) =>
    out.push({ path, message: `${path}: \`${k}\` applies to ${types} only, not to ${s.type}` });
  const numeric = s.type === 'integer' || s.type === 'number';
  if (s.items && s.type !== 'list') wrong('items', 'a list');
  if ((s.properties || s.required) && s.type !== 'map') wrong(s.properties ? 'properties' : 'required', 'a map');
  if ((s.minimum !== undefined || s.maximum !== undefined) && !numeric)
    wrong(s.minimum !== undefined ? 'minimum' : 'maximum', 'an integer or a number');
  if (s.pattern !== undefined && s.type !== 'string') wrong('pattern', 'a string');
  if (s.minimum !== undefined && s.maximum !== undefined && s.minimum > s.maximum)
    out.push({ path, message: `${path}: minimum ${s.minimum} is above maximum ${s.maximum}` });
  if (s.pattern !== undefined) {
    try {
      new RegExp(s.pattern, 'u');
    } catch (err) {
      out.push({ path, message: `${path}: pattern does not compile: ${(err as Error).message}` });
    }
  }
  for (const v of s.enum ?? [])
    if (!matchesType(v, s.type))
      out.push({ path, message: `${path}: enum value ${JSON.stringify(v)} is ${describeValue(v)}, not ${s.type}` });
  if (s.items) out.push(...schemaProblems(s.items, `${path}[]`));
  for (const [k, v] of Object.entries(s.properties ?? {})) out.push(...schemaProblems(v, childPath(path, k)));
  return out;
}

/** Every place where `value` breaks `schema`, each with its path; [] when it fits. */
export function checkValue(value: unknown, s: ValueSchema, path: string): ValueProblem[] {
  if (!matchesType(value, s.type)) return [{ path, message: `${path} must be ${s.type}, got ${describeValue(value)}` }];
  const out: ValueProblem[] = [];
  if (s.enum && !s.enum.some((e) => sameValue(e, value)))
    out.push({ path, message: `${path} must be one of ${s.enum.map((e) => JSON.stringify(e)).join(', ')}` });
  if (typeof value === 'number') {
    if (s.minimum !== undefined && value < s.minimum)
      out.push({ path, message: `${path} must be at least ${s.minimum}, got ${value}` });
    if (s.maximum !== undefined && value > s.maximum)
      out.push({ path, message: `${path} must be at most ${s.maximum}, got ${value}` });
  }
  // The value is not quoted back: an input may be sensitive without being declared secret.
  if (typeof value === 'string' && s.pattern !== undefined && !safeTest(s.pattern, value))
    out.push({ path, message: `${path} does not match the pattern ${s.pattern}` });
  if (Array.isArray(value) && s.items)
    value.forEach((v, i) => out.push(...checkValue(v, s.items!, childPath(path, i))));
  if (s.type === 'map' && value !== null && typeof value === 'object') {
    const m = value as Record<string, unknown>;
    for (const k of s.required ?? [])
      if (!Object.prototype.hasOwnProperty.call(m, k))
        out.push({ path: childPath(path, k), message: `${childPath(path, k)} is required` });
    for (const [k, sub] of Object.entries(s.properties ?? {}))
      if (Object.prototype.hasOwnProperty.call(m, k)) out.push(...checkValue(m[k], sub, childPath(path, k)));
  }
  return out;
}

function safeTest(pattern: string, value: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(value);
  } catch {
    return false;
  }
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
