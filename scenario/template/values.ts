/**
 * The Go value model the template engine works on. Data is JSON-like:
 * strings, booleans, null (Go's nil), arrays ([]interface{}), plain objects
 * (map[string]interface{}) and numbers. Go separates int from float64 and
 * templates can tell them apart (`eq 1 1.0` is an error), so: an integral
 * JS number is an int, any other number a float64, and `GoFloat` boxes a
 * float64 whose value happens to be integral (`1.0`, or a float sum).
 */
export class GoFloat {
  constructor(readonly v: number) {}
}

export type Kind = 'nil' | 'bool' | 'int' | 'float' | 'string' | 'slice' | 'map' | 'func';

export function kindOf(v: unknown): Kind {
  if (v === null || v === undefined) return 'nil';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (v instanceof GoFloat) return 'float';
  if (typeof v === 'string') return 'string';
  if (Array.isArray(v)) return 'slice';
  if (typeof v === 'function') return 'func';
  return 'map';
}

/** Numeric value of an int or float. */
export function numberOf(v: unknown): number {
  return v instanceof GoFloat ? v.v : (v as number);
}

/** A float64 result, boxed when integral so it stays a float. */
export function makeFloat(n: number): unknown {
  return Number.isInteger(n) ? new GoFloat(n) : n;
}

/** Go type name, as fmt's %T and error messages print it. */
export function typeName(v: unknown): string {
  switch (kindOf(v)) {
    case 'nil':
      return '<nil>';
    case 'bool':
      return 'bool';
    case 'int':
      return 'int';
    case 'float':
      return 'float64';
    case 'string':
      return 'string';
    case 'slice':
      return '[]interface {}';
    case 'map':
      return 'map[string]interface {}';
    case 'func':
      return 'func';
  }
}

/** text/template's truth: false, 0, nil and empty string/slice/map are false. */
export function isTrue(v: unknown): boolean {
  switch (kindOf(v)) {
    case 'nil':
      return false;
    case 'bool':
      return v as boolean;
    case 'int':
    case 'float':
      return numberOf(v) !== 0;
    case 'string':
      return (v as string).length > 0;
    case 'slice':
      return (v as unknown[]).length > 0;
    case 'map':
      return Object.keys(v as object).length > 0;
    case 'func':
      return true;
  }
}

/** Length in bytes, as Go's len() counts a string. */
export function byteLength(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

export function sortedKeys(m: object): string[] {
  // Go sorts string map keys by bytes; for UTF-16 this equals code point order except surrogates, which we accept.
  return Object.keys(m).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Shortest float formatting with Go's %v / %g rule: exponent form when exp < -4 or exp >= `eprec`. */
export function formatFloatG(n: number, eprec = 6, shortest = true, prec = -1): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  const e = shortest ? n.toExponential() : n.toExponential(Math.max(prec - 1, 0));
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(e)!;
  const sign = m[1]!;
  let digits = m[2]! + (m[3] ?? '');
  const exp = Number(m[4]);
  if (!shortest) digits = digits.replace(/0+$/, '') || '0';
  const limit = shortest
    ? eprec
    : Math.max(prec, 1) > digits.length && digits.length >= exp + 1
      ? digits.length
      : Math.max(prec, 1);
  if (exp < -4 || exp >= limit) {
    const mant = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const ae = Math.abs(exp);
    return `${sign}${mant}e${exp < 0 ? '-' : '+'}${ae < 10 ? '0' : ''}${ae}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  if (digits.length <= exp + 1) return `${sign}${digits}${'0'.repeat(exp + 1 - digits.length)}`;
  return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
}

/** fmt's %v of a float64 (= %g): shortest digits, exponent form when exp < -4 or exp >= 6 (1e+06). */
export function formatFloatV(n: number): string {
  return formatFloatG(n, 6);
}

/** fmt.Sprint-style text of a value nested in a collection (nil prints `<nil>`). */
export function formatValue(v: unknown): string {
  switch (kindOf(v)) {
    case 'nil':
      return '<nil>';
    case 'bool':
      return String(v);
    case 'int':
      return String(v);
    case 'float':
      return formatFloatV(numberOf(v));
    case 'string':
      return v as string;
    case 'slice':
      return `[${(v as unknown[]).map(formatValue).join(' ')}]`;
    case 'map':
      return `map[${sortedKeys(v as object)
        .map((k) => `${k}:${formatValue((v as Record<string, unknown>)[k])}`)
        .join(' ')}]`;
    case 'func':
      return 'func';
  }
}

/** Strict equality of two values of the same basic kind. */
export function basicEqual(a: unknown, b: unknown): boolean {
  return kindOf(a) === 'string' || kindOf(a) === 'bool' ? a === b : numberOf(a) === numberOf(b);
}
