/**
 * The parts of Go's fmt that templates reach: Sprint, Sprintln and Sprintf
 * with the verbs %v %s %d %q %x %X %o %b %c %t %f %F %e %E %g %G %%, the flags
 * `-+ 0#`, width and precision. Wrong-type arguments print Go's `%!d(string=x)`
 * forms, and missing or extra arguments `%!d(MISSING)` / `%!(EXTRA ...)`,
 * because Go does that instead of failing and the differential tests hold us
 * to Go's output.
 */
import { formatFloatG, formatValue, kindOf, numberOf, sortedKeys, typeName } from './values';
import { goQuote, goQuoteRune } from './quote';

export function sprint(args: unknown[]): string {
  let out = '';
  for (let i = 0; i < args.length; i++) {
    const isStr = typeof args[i] === 'string';
    if (i > 0 && !isStr && typeof args[i - 1] !== 'string') out += ' ';
    out += formatValue(args[i]);
  }
  return out;
}

export function sprintln(args: unknown[]): string {
  return args.map(formatValue).join(' ') + '\n';
}

interface Spec {
  minus: boolean;
  plus: boolean;
  zero: boolean;
  space: boolean;
  sharp: boolean;
  width: number;
  prec: number;
  verb: string;
}

export function sprintf(format: string, args: unknown[]): string {
  let out = '';
  let argi = 0;
  let i = 0;
  while (i < format.length) {
    const pct = format.indexOf('%', i);
    if (pct < 0) {
      out += format.slice(i);
      break;
    }
    out += format.slice(i, pct);
    i = pct + 1;
    const spec: Spec = {
      minus: false,
      plus: false,
      zero: false,
      space: false,
      sharp: false,
      width: -1,
      prec: -1,
      verb: '',
    };
    for (; i < format.length; i++) {
      const c = format[i];
      if (c === '-') {
        spec.minus = true;
        spec.zero = false;
      } else if (c === '+') spec.plus = true;
      else if (c === '0') spec.zero = !spec.minus;
      else if (c === ' ') spec.space = true;
      else if (c === '#') spec.sharp = true;
      else break;
    }
    const w = /^[0-9]+/.exec(format.slice(i));
    if (w) {
      spec.width = Number(w[0]);
      i += w[0].length;
    }
    if (format[i] === '.') {
      i++;
      const p = /^[0-9]+/.exec(format.slice(i));
      spec.prec = p ? Number(p[0]) : 0;
      if (p) i += p[0].length;
    }
    if (i >= format.length) {
      out += '%!(NOVERB)';
      break;
    }
    const verb = String.fromCodePoint(format.codePointAt(i)!);
    i += verb.length;
    spec.verb = verb;
    if (verb === '%') {
      out += '%';
      continue;
    }
    if (argi >= args.length) {
      out += `%!${verb}(MISSING)`;
      continue;
    }
    out += formatArg(args[argi++], spec);
  }
  if (argi < args.length) {
    out +=
      '%!(EXTRA ' +
      args
        .slice(argi)
        .map((a) => (a === null || a === undefined ? '<nil>' : `${typeName(a)}=${formatValue(a)}`))
        .join(', ') +
      ')';
  }
  return out;
}

function bad(v: unknown, verb: string): string {
  return v === null || v === undefined ? `%!${verb}(<nil>)` : `%!${verb}(${typeName(v)}=${formatValue(v)})`;
}

function formatArg(v: unknown, s: Spec): string {
  const k = kindOf(v);
  if (k === 'slice' || k === 'map') {
    if (s.verb === 'T') return pad(typeName(v), s);
    // fmt applies the verb to each element.
    if (k === 'slice') return `[${(v as unknown[]).map((x) => formatArg(x, { ...s, width: s.width })).join(' ')}]`;
    const m = v as Record<string, unknown>;
    return `map[${sortedKeys(m)
      .map((key) => `${formatArg(key, s)}:${formatArg(m[key], s)}`)
      .join(' ')}]`;
  }
  if (s.verb === 'T') return pad(typeName(v), s);
  if (s.verb === 'v') {
    if (k === 'float') return formatFloat(numberOf(v), { ...s, verb: 'g' });
    if (k === 'int') return formatInt(v as number, { ...s, verb: 'd' });
    if (k === 'string' && s.sharp) return pad(goQuote(v as string), s);
    return pad(formatValue(v), s);
  }
  switch (k) {
    case 'nil':
      return bad(v, s.verb);
    case 'bool':
      return s.verb === 't' ? pad(String(v), s) : bad(v, s.verb);
    case 'int':
      return 'bcdoOqxXU'.includes(s.verb)
        ? formatInt(v as number, s)
        : 'eEfFgG'.includes(s.verb)
          ? bad(v, s.verb)
          : bad(v, s.verb);
    case 'float':
      return 'eEfFgG'.includes(s.verb) ? formatFloat(numberOf(v), s) : bad(v, s.verb);
    case 'string':
      return formatString(v as string, s);
    default:
      return bad(v, s.verb);
  }
}

function formatString(str: string, s: Spec): string {
  switch (s.verb) {
    case 's':
      return pad(s.prec >= 0 ? [...str].slice(0, s.prec).join('') : str, s);
    case 'q':
      return pad(s.sharp && !str.includes('`') ? '`' + str + '`' : goQuote(str), s);
    case 'x':
    case 'X': {
      const hex = Buffer.from(s.prec >= 0 ? [...str].slice(0, s.prec).join('') : str, 'utf8').toString('hex');
      return pad(s.verb === 'X' ? hex.toUpperCase() : hex, s);
    }
    default:
      return bad(str, s.verb);
  }
}

function formatInt(n: number, s: Spec): string {
  if (s.verb === 'c') return pad(String.fromCodePoint(n), s);
  if (s.verb === 'q') return pad(goQuoteRune(n), s);
  if (s.verb === 'U') return pad('U+' + n.toString(16).toUpperCase().padStart(4, '0'), s);
  const base = { d: 10, b: 2, o: 8, O: 8, x: 16, X: 16 }[s.verb as 'd'] ?? 10;
  let digits = Math.abs(n).toString(base);
  if (s.verb === 'X') digits = digits.toUpperCase();
  if (s.prec >= 0) digits = digits.padStart(s.prec, '0');
  let prefix = '';
  if (s.sharp || s.verb === 'O') prefix = { b: '0b', o: '0', O: '0o', x: '0x', X: '0X' }[s.verb as 'b'] ?? '';
  if (s.verb === 'o' && s.sharp && digits.startsWith('0')) prefix = '';
  const sign = n < 0 ? '-' : s.plus ? '+' : s.space ? ' ' : '';
  return padNumber(sign, prefix + digits, s, s.prec < 0);
}

function formatFloat(n: number, s: Spec): string {
  if (!Number.isFinite(n)) {
    const t = Number.isNaN(n) ? 'NaN' : n > 0 ? (s.plus ? '+Inf' : s.space ? ' Inf' : 'Inf') : '-Inf';
    return pad(t, { ...s, zero: false });
  }
  const neg = n < 0 || Object.is(n, -0);
  const a = Math.abs(n);
  let body: string;
  switch (s.verb) {
    case 'f':
    case 'F':
      body = toFixedEven(a, s.prec < 0 ? 6 : s.prec);
      break;
    case 'e':
    case 'E':
      body = expForm(a, s.prec < 0 ? 6 : s.prec);
      break;
    default:
      body = s.prec < 0 ? formatFloatG(a) : formatFloatG(a, 6, false, s.prec === 0 ? 1 : s.prec);
  }
  if (s.verb === 'E' || s.verb === 'G') body = body.toUpperCase();
  const sign = neg ? '-' : s.plus ? '+' : s.space ? ' ' : '';
  return padNumber(sign, body, s, true);
}

/** toFixed, but exact ties round half to even as Go's strconv does. */
function toFixedEven(a: number, prec: number): string {
  if (a >= 1e21) return BigInt(Math.round(a)).toString() + (prec > 0 ? '.' + '0'.repeat(prec) : '');
  const exact = a.toFixed(100).replace(/0+$/, '');
  const dot = exact.indexOf('.');
  const tail = dot < 0 ? '' : exact.slice(dot + 1 + prec);
  const fixed = a.toFixed(prec);
  if (tail === '5') {
    // Exact tie: toFixed rounded up; Go rounds to even.
    const down = exact.slice(0, dot + 1 + prec).replace(/\.$/, '');
    const last = Number(down[down.length - 1]);
    if (last % 2 === 0) return down;
  }
  return fixed;
}

function expForm(a: number, prec: number): string {
  const m = /^(\d(?:\.\d+)?)e([+-])(\d+)$/.exec(a.toExponential(prec))!;
  return `${m[1]}e${m[2]}${m[3]!.length < 2 ? '0' : ''}${m[3]}`;
}

function padNumber(sign: string, body: string, s: Spec, zeroOk: boolean): string {
  const len = [...sign].length + [...body].length;
  if (s.width > len) {
    if (s.minus) return sign + body + ' '.repeat(s.width - len);
    if (s.zero && zeroOk) return sign + '0'.repeat(s.width - len) + body;
    return ' '.repeat(s.width - len) + sign + body;
  }
  return sign + body;
}

function pad(text: string, s: Spec): string {
  const len = [...text].length;
  if (s.width <= len) return text;
  if (s.minus) return text + ' '.repeat(s.width - len);
  return (s.zero ? '0' : ' ').repeat(s.width - len) + text;
}
