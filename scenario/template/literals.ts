/**
 * Go literal syntax inside template actions: interpreted strings with Go
 * escapes, raw strings, character constants (runes, which are ints) and
 * numbers. A number is a float when its text has `.`, `e` or `p` (outside a
 * hex integer), as in text/template's idealConstant; otherwise an int.
 */
import { TemplateSyntaxError } from './lexer';

const SIMPLE: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\' };

export function unquoteGo(text: string, offset: number): string {
  if (text.startsWith('`')) return text.slice(1, -1).replace(/\r/g, '');
  const quote = text[0]!;
  const body = text.slice(1, -1);
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      if (c === quote) throw new TemplateSyntaxError(`invalid syntax in ${text}`, offset);
      out += c;
      continue;
    }
    const e = body[++i];
    if (e === undefined) throw new TemplateSyntaxError(`invalid syntax in ${text}`, offset);
    if (SIMPLE[e] !== undefined) {
      out += SIMPLE[e];
      continue;
    }
    if (e === quote) {
      out += e;
      continue;
    }
    const hex = (n: number): number => {
      const h = body.slice(i + 1, i + 1 + n);
      if (h.length !== n || !/^[0-9a-fA-F]+$/.test(h))
        throw new TemplateSyntaxError(`invalid syntax in ${text}`, offset);
      i += n;
      return parseInt(h, 16);
    };
    if (e === 'x') {
      out += String.fromCharCode(hex(2));
      continue;
    }
    if (e === 'u') {
      out += String.fromCodePoint(hex(4));
      continue;
    }
    if (e === 'U') {
      out += String.fromCodePoint(hex(8));
      continue;
    }
    if (/[0-7]/.test(e)) {
      const o = body.slice(i, i + 3);
      if (!/^[0-7]{3}$/.test(o)) throw new TemplateSyntaxError(`invalid syntax in ${text}`, offset);
      i += 2;
      out += String.fromCharCode(parseInt(o, 8));
      continue;
    }
    throw new TemplateSyntaxError(`invalid syntax in ${text}`, offset);
  }
  return out;
}

export function parseGoNumber(text: string, isChar: boolean, offset: number): { value: number; isFloat: boolean } {
  if (isChar) {
    const s = unquoteGo(text, offset);
    const cp = s.codePointAt(0);
    if (cp === undefined || [...s].length !== 1)
      throw new TemplateSyntaxError(`malformed character constant: ${text}`, offset);
    return { value: cp, isFloat: false };
  }
  if (text.endsWith('i')) throw new TemplateSyntaxError(`complex numbers are not supported: ${text}`, offset);
  const clean = text.replace(/_/g, '');
  const neg = clean.startsWith('-');
  const body = clean.replace(/^[+-]/, '');
  let value: number;
  let isFloat = false;
  if (/^0[xX][0-9a-fA-F]+$/.test(body)) value = parseInt(body.slice(2), 16);
  else if (/^0[oO][0-7]+$/.test(body)) value = parseInt(body.slice(2), 8);
  else if (/^0[bB][01]+$/.test(body)) value = parseInt(body.slice(2), 2);
  else if (/^0[0-7]+$/.test(body)) value = parseInt(body.slice(1), 8);
  else if (/^[0-9]+$/.test(body)) value = Number(body);
  else if (/^([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$/.test(body)) {
    value = Number(body);
    isFloat = true;
  } else throw new TemplateSyntaxError(`bad number syntax: "${text}"`, offset);
  if (!isFloat && !Number.isSafeInteger(value)) throw new TemplateSyntaxError(`integer out of range: ${text}`, offset);
  return { value: neg ? -value : value, isFloat };
}
