/**
 * text/template's predefined functions, with Go's semantics: and, or, not,
 * len, index, slice, print, printf, println, html, js, urlquery, and the
 * comparisons eq, ne, lt, le, gt, ge. `call` is left out: template data here
 * is plain JSON and holds no functions, so it could only ever fail.
 */
import { FuncError, type TemplateFunc } from './types';
import { byteLength, isTrue, kindOf, numberOf, typeName, type Kind } from '../values';
import { sprint, sprintf, sprintln } from '../fmt';
import { htmlEscape, jsEscape, queryEscape } from '../quote';

const BASIC: Kind[] = ['bool', 'int', 'float', 'string'];

function isNil(v: unknown): boolean {
  return v === null || v === undefined;
}

function eq(a: unknown, ...rest: unknown[]): boolean {
  if (rest.length === 0) throw new FuncError('missing argument for comparison');
  const ka = kindOf(a);
  for (const b of rest) {
    const kb = kindOf(b);
    if (ka !== kb) {
      if (BASIC.includes(ka) && BASIC.includes(kb)) throw new FuncError('incompatible types for comparison');
      if (!isNil(a) && !isNil(b)) throw new FuncError('non-comparable types');
      continue;
    }
    if (ka === 'slice' || ka === 'map' || ka === 'func') throw new FuncError(`non-comparable type ${typeName(a)}`);
    if (ka === 'nil' || (ka === 'string' || ka === 'bool' ? a === b : numberOf(a) === numberOf(b))) return true;
  }
  return false;
}

function lt(a: unknown, b: unknown): boolean {
  const ka = kindOf(a);
  const kb = kindOf(b);
  if (!BASIC.includes(ka) || !BASIC.includes(kb)) throw new FuncError('invalid type for comparison');
  if (ka !== kb) throw new FuncError('incompatible types for comparison');
  if (ka === 'bool') throw new FuncError('invalid type for comparison');
  if (ka === 'string') return (a as string) < (b as string);
  return numberOf(a) < numberOf(b);
}

function indexArg(i: unknown, cap: number, what: string): number {
  if (kindOf(i) !== 'int') throw new FuncError(`cannot index ${what} with type ${typeName(i)}`);
  const n = i as number;
  if (n < 0 || n >= cap) throw new FuncError(`index out of range: ${n}`);
  return n;
}

function index(item: unknown, ...indexes: unknown[]): unknown {
  let v = item;
  if (isNil(v)) throw new FuncError('index of untyped nil');
  for (const i of indexes) {
    switch (kindOf(v)) {
      case 'slice':
        v = (v as unknown[])[indexArg(i, (v as unknown[]).length, 'slice/array')];
        break;
      case 'string': {
        const bytes = Buffer.from(v as string, 'utf8');
        v = bytes[indexArg(i, bytes.length, 'slice/array')];
        break;
      }
      case 'map':
        if (kindOf(i) !== 'string') throw new FuncError(`value has type ${typeName(i)}; should be string`);
        v = Object.prototype.hasOwnProperty.call(v, i as string) ? (v as Record<string, unknown>)[i as string] : null;
        break;
      case 'nil':
        throw new FuncError('index of nil pointer');
      default:
        throw new FuncError(`can't index item of type ${typeName(v)}`);
    }
  }
  return v;
}

function slice(item: unknown, ...idx: unknown[]): unknown {
  const k = kindOf(item);
  if (isNil(item)) throw new FuncError('slice of untyped nil');
  if (idx.length > 3) throw new FuncError(`too many slice indexes: ${idx.length}`);
  if (k !== 'string' && k !== 'slice') throw new FuncError(`can't slice item of type ${typeName(item)}`);
  if (k === 'string' && idx.length === 3) throw new FuncError('cannot 3-index slice a string');
  const len = k === 'string' ? byteLength(item as string) : (item as unknown[]).length;
  const ns = idx.map((i) => {
    if (kindOf(i) !== 'int') throw new FuncError(`cannot index slice/array with type ${typeName(i)}`);
    if ((i as number) < 0 || (i as number) > len) throw new FuncError(`index out of range: ${i as number}`);
    return i as number;
  });
  const lo = ns[0] ?? 0;
  const hi = ns[1] ?? len;
  if (lo > hi) throw new FuncError(`invalid slice index: ${lo} > ${hi}`);
  if (ns[2] !== undefined && hi > ns[2]) throw new FuncError(`invalid slice index: ${hi} > ${ns[2]}`);
  return k === 'string'
    ? Buffer.from(item as string, 'utf8')
        .subarray(lo, hi)
        .toString('utf8')
    : (item as unknown[]).slice(lo, hi);
}

function len(v: unknown): number {
  switch (kindOf(v)) {
    case 'string':
      return byteLength(v as string);
    case 'slice':
      return (v as unknown[]).length;
    case 'map':
      return Object.keys(v as object).length;
    case 'nil':
      throw new FuncError('len of nil pointer');
    default:
      throw new FuncError(`len of type ${typeName(v)}`);
  }
}

/** html/js/urlquery take the single string as is, else fmt.Sprint of all arguments. */
const evalArgs = (args: unknown[]): string =>
  args.length === 1 && typeof args[0] === 'string' ? args[0] : sprint(args);

export const BUILTINS: Record<string, TemplateFunc> = {
  and: { params: ['value'], variadic: 'value', lazy: true, fn: () => undefined },
  or: { params: ['value'], variadic: 'value', lazy: true, fn: () => undefined },
  not: { params: ['value'], fn: (v) => !isTrue(v) },
  len: { params: ['value'], fn: len },
  index: { params: ['value'], variadic: 'value', fn: index },
  slice: { params: ['value'], variadic: 'value', fn: slice },
  print: { params: [], variadic: 'any', fn: (...a) => sprint(a) },
  printf: { params: ['string'], variadic: 'any', fn: (f, ...a) => sprintf(f as string, a) },
  println: { params: [], variadic: 'any', fn: (...a) => sprintln(a) },
  html: { params: [], variadic: 'any', fn: (...a) => htmlEscape(evalArgs(a)) },
  js: { params: [], variadic: 'any', fn: (...a) => jsEscape(evalArgs(a)) },
  urlquery: { params: [], variadic: 'any', fn: (...a) => queryEscape(evalArgs(a)) },
  eq: { params: ['value'], variadic: 'value', fn: eq },
  ne: { params: ['value', 'value'], fn: (a, b) => !eq(a, b) },
  lt: { params: ['value', 'value'], fn: lt },
  le: { params: ['value', 'value'], fn: (a, b) => lt(a, b) || eq(a, b) },
  gt: { params: ['value', 'value'], fn: (a, b) => !(lt(a, b) || eq(a, b)) },
  ge: { params: ['value', 'value'], fn: (a, b) => !lt(a, b) },
};
