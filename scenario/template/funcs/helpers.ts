/**
 * The safe helper subset (string, list, dict, encoding, math), named and
 * ordered as the usual helper library does, so `{{ .x | trimPrefix "v" }}`
 * reads naturally: the piped value is the last argument. Nothing here reads
 * files, network or environment, runs commands, makes keys or returns
 * random values. The Go twin is test/gotemplate/funcs.go.
 */
import { FuncError, type TemplateFunc } from './types';
import { isTrue, kindOf, makeFloat, numberOf, sortedKeys, typeName, formatValue, GoFloat } from '../values';
import { goQuote } from '../quote';
import { LIMITS } from '../../limits';

const S = 'string' as const;
const I = 'int' as const;
const A = 'any' as const;

function arith(name: string, op: (a: number, b: number) => number, intOnly = false): TemplateFunc {
  return {
    params: [A, A],
    fn: (a, b) => {
      for (const v of [a, b]) {
        const k = kindOf(v);
        if (k !== 'int' && k !== 'float') throw new FuncError(`${name}: expected a number, got ${typeName(v)}`);
        if (intOnly && k !== 'int') throw new FuncError(`${name}: expected an integer, got ${typeName(v)}`);
      }
      const bothInt = kindOf(a) === 'int' && kindOf(b) === 'int';
      if ((name === 'div' || name === 'mod') && numberOf(b) === 0) throw new FuncError(`${name}: division by zero`);
      const r = op(numberOf(a), numberOf(b));
      if (bothInt) {
        const t = name === 'div' ? Math.trunc(r) : r;
        if (!Number.isSafeInteger(t)) throw new FuncError(`${name}: integer overflow`);
        return t === 0 ? 0 : t;
      }
      return makeFloat(r);
    },
  };
}

function indent(n: unknown, s: unknown): string {
  if ((n as number) < 0) throw new FuncError('indent: negative width');
  const pad = ' '.repeat(n as number);
  return pad + (s as string).split('\n').join('\n' + pad);
}

/** Go's encoding/json output: sorted keys, HTML-safe escapes of < > & and U+2028/2029. */
export function toJson(v: unknown): string {
  const norm = (x: unknown): unknown => {
    if (x instanceof GoFloat) return x.v;
    if (Array.isArray(x)) return x.map(norm);
    if (x !== null && typeof x === 'object') {
      const out: Record<string, unknown> = {};
      for (const k of sortedKeys(x)) out[k] = norm((x as Record<string, unknown>)[k]);
      return out;
    }
    if (typeof x === 'number' && !Number.isFinite(x)) throw new FuncError(`json: unsupported value: ${formatValue(x)}`);
    return x;
  };
  return (JSON.stringify(norm(v ?? null)) ?? 'null').replace(
    /[<>&\u2028\u2029]/g,
    (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'),
  );
}

function b64dec(s: unknown): string {
  const t = (s as string).replace(/[\r\n]/g, '');
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(t))
    throw new FuncError('illegal base64 data');
  return Buffer.from(t, 'base64').toString('utf8');
}

function dict(...pairs: unknown[]): Record<string, unknown> {
  if (pairs.length % 2 !== 0) throw new FuncError('dict: odd number of arguments');
  const out: Record<string, unknown> = {};
  for (let i = 0; i < pairs.length; i += 2) {
    if (typeof pairs[i] !== 'string') throw new FuncError(`dict: key ${formatValue(pairs[i])} is not a string`);
    if (pairs[i] === '__proto__') throw new FuncError('dict: key "__proto__" is not allowed');
    out[pairs[i] as string] = pairs[i + 1];
  }
  return out;
}

function keys(m: unknown): unknown[] {
  if (kindOf(m) !== 'map') throw new FuncError(`keys: expected a map, got ${typeName(m)}`);
  return sortedKeys(m as object);
}

function join(sep: unknown, list: unknown): string {
  if (kindOf(list) !== 'slice') throw new FuncError(`join: expected a list, got ${typeName(list)}`);
  return (list as unknown[]).map(formatValue).join(sep as string);
}

function repeat(n: unknown, s: unknown): string {
  const count = n as number;
  if (count < 0) throw new FuncError('repeat: negative count');
  if (count * (s as string).length > LIMITS.maxTemplateOutputBytes) throw new FuncError('repeat: result too large');
  return (s as string).repeat(count);
}

export const HELPERS: Record<string, TemplateFunc> = {
  upper: { params: [S], fn: (s) => (s as string).toUpperCase() },
  lower: { params: [S], fn: (s) => (s as string).toLowerCase() },
  trim: { params: [S], fn: (s) => (s as string).replace(/^[\s\u0085\u00a0]+|[\s\u0085\u00a0]+$/g, '') },
  trimPrefix: {
    params: [S, S],
    fn: (p, s) => ((s as string).startsWith(p as string) ? (s as string).slice((p as string).length) : s),
  },
  trimSuffix: {
    params: [S, S],
    fn: (p, s) =>
      (p as string) !== '' && (s as string).endsWith(p as string) ? (s as string).slice(0, -(p as string).length) : s,
  },
  replace: {
    params: [S, S, S],
    fn: (o, n, s) =>
      o === '' ? (s as string).replace(/(?:)/gu, n as string) : (s as string).split(o as string).join(n as string),
  },
  contains: { params: [S, S], fn: (sub, s) => (s as string).includes(sub as string) },
  hasPrefix: { params: [S, S], fn: (p, s) => (s as string).startsWith(p as string) },
  hasSuffix: { params: [S, S], fn: (p, s) => (s as string).endsWith(p as string) },
  split: { params: [S, S], fn: (sep, s) => (sep === '' ? [...(s as string)] : (s as string).split(sep as string)) },
  join: { params: [S, A], fn: join },
  quote: { params: [S], fn: (s) => goQuote(s as string) },
  squote: { params: [S], fn: (s) => `'${s as string}'` },
  indent: { params: [I, S], fn: indent },
  nindent: { params: [I, S], fn: (n, s) => '\n' + indent(n, s) },
  repeat: { params: [I, S], fn: repeat },
  toJson: { params: [A], fn: toJson },
  b64enc: { params: [S], fn: (s) => Buffer.from(s as string, 'utf8').toString('base64') },
  b64dec: { params: [S], fn: b64dec },
  add: arith('add', (a, b) => a + b),
  sub: arith('sub', (a, b) => a - b),
  mul: arith('mul', (a, b) => a * b),
  div: arith('div', (a, b) => a / b),
  mod: arith('mod', (a, b) => a % b, true),
  list: { params: [], variadic: A, fn: (...items) => items.map((x) => (x === undefined ? null : x)) },
  dict: { params: [], variadic: A, fn: dict },
  keys: { params: [A], fn: keys },
  hasKey: { params: [A, S], fn: (m, k) => kindOf(m) === 'map' && Object.prototype.hasOwnProperty.call(m, k as string) },
  default: { params: [A, A], fn: (d, v) => (isTrue(v) ? v : d) },
  empty: { params: [A], fn: (v) => !isTrue(v) },
  toString: { params: [A], fn: (v: unknown) => formatValue(v) },
};
