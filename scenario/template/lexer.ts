/**
 * Lexer for Go text/template syntax. It follows the token rules of Go's
 * text/template/parse/lex.go: `{{`/`}}` delimiters, `{{- ` and ` -}}` trim
 * markers (the space is required), comments `{{/* ... *\/}}`, and inside an
 * action: fields, variables, identifiers, keywords, strings, raw strings,
 * characters, numbers, `|`, `(`, `)`, `:=`, `=` and `,`.
 */
export type TokenType =
  | 'text'
  | 'left'
  | 'right'
  | 'field'
  | 'variable'
  | 'identifier'
  | 'keyword'
  | 'string'
  | 'rawstring'
  | 'char'
  | 'number'
  | 'bool'
  | 'nil'
  | 'dot'
  | 'pipe'
  | 'lparen'
  | 'rparen'
  | 'declare'
  | 'assign'
  | 'comma'
  | 'space'
  | 'eof';

export interface Token {
  type: TokenType;
  value: string;
  offset: number;
}

export class TemplateSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
    this.name = 'TemplateSyntaxError';
  }
}

const KEYWORDS = new Set(['if', 'else', 'end', 'range', 'with', 'define', 'template', 'block', 'break', 'continue']);

const isSpace = (c: string): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isAlnum = (c: string): boolean => /[\p{L}\p{N}_]/u.test(c);

export function lex(src: string): Token[] {
  const out: Token[] = [];
  let pos = 0;
  while (pos < src.length) {
    const open = src.indexOf('{{', pos);
    if (open < 0) {
      out.push({ type: 'text', value: src.slice(pos), offset: pos });
      break;
    }
    let textEnd = open;
    let afterOpen = open + 2;
    const trimLeft = src[afterOpen] === '-' && isSpace(src[afterOpen + 1] ?? '');
    if (trimLeft) {
      while (textEnd > pos && isSpace(src[textEnd - 1]!)) textEnd--;
      afterOpen += 2;
    }
    if (textEnd > pos) out.push({ type: 'text', value: src.slice(pos, textEnd), offset: pos });
    // Comment: must start right after the delimiter (and trim marker).
    if (src.startsWith('/*', afterOpen)) {
      const close = src.indexOf('*/', afterOpen + 2);
      if (close < 0) throw new TemplateSyntaxError('unclosed comment', open);
      let p = close + 2;
      let trimRight = false;
      if (src.startsWith(' -}}', p)) {
        trimRight = true;
        p += 4;
      } else if (src.startsWith('}}', p)) p += 2;
      else throw new TemplateSyntaxError('comment ends before closing delimiter', close);
      if (trimRight) while (p < src.length && isSpace(src[p]!)) p++;
      pos = p;
      continue;
    }
    out.push({ type: 'left', value: '{{', offset: open });
    pos = lexAction(src, afterOpen, out);
  }
  out.push({ type: 'eof', value: '', offset: src.length });
  return out;
}

/** Lexes the inside of one action; returns the offset after `}}` (and trimmed space). */
function lexAction(src: string, start: number, out: Token[]): number {
  let p = start;
  let parens = 0;
  for (;;) {
    if (p >= src.length) throw new TemplateSyntaxError('unclosed action', start);
    const c = src[p]!;
    if (
      src.startsWith(' -}}', p) ||
      src.startsWith('\t-}}', p) ||
      src.startsWith('\n-}}', p) ||
      src.startsWith('\r-}}', p)
    ) {
      if (parens > 0) throw new TemplateSyntaxError('unclosed left paren', p);
      out.push({ type: 'right', value: '}}', offset: p + 2 });
      p += 4;
      while (p < src.length && isSpace(src[p]!)) p++;
      return p;
    }
    if (src.startsWith('}}', p)) {
      if (parens > 0) throw new TemplateSyntaxError('unclosed left paren', p);
      out.push({ type: 'right', value: '}}', offset: p });
      return p + 2;
    }
    if (isSpace(c)) {
      const s = p;
      while (p < src.length && isSpace(src[p]!) && !src.startsWith(' -}}', p)) p++;
      if (src.startsWith(' -}}', p) && p === s) continue;
      out.push({ type: 'space', value: src.slice(s, p), offset: s });
      continue;
    }
    const s = p;
    if (c === '|') {
      out.push({ type: 'pipe', value: c, offset: p++ });
      continue;
    }
    if (c === ',') {
      out.push({ type: 'comma', value: c, offset: p++ });
      continue;
    }
    if (c === '(') {
      parens++;
      out.push({ type: 'lparen', value: c, offset: p++ });
      continue;
    }
    if (c === ')') {
      if (--parens < 0) throw new TemplateSyntaxError('unexpected right paren', p);
      out.push({ type: 'rparen', value: c, offset: p++ });
      continue;
    }
    if (c === ':') {
      if (src[p + 1] !== '=') throw new TemplateSyntaxError('expected :=', p);
      out.push({ type: 'declare', value: ':=', offset: p });
      p += 2;
      continue;
    }
    if (c === '=') {
      out.push({ type: 'assign', value: '=', offset: p++ });
      continue;
    }
    if (c === '"') {
      p = scanQuoted(src, p, '"');
      out.push({ type: 'string', value: src.slice(s, p), offset: s });
      continue;
    }
    if (c === "'") {
      p = scanQuoted(src, p, "'");
      out.push({ type: 'char', value: src.slice(s, p), offset: s });
      continue;
    }
    if (c === '`') {
      const close = src.indexOf('`', p + 1);
      if (close < 0) throw new TemplateSyntaxError('unterminated raw quoted string', p);
      p = close + 1;
      out.push({ type: 'rawstring', value: src.slice(s, p), offset: s });
      continue;
    }
    if (c === '$') {
      p++;
      while (p < src.length && isAlnum(src[p]!)) p++;
      out.push({ type: 'variable', value: src.slice(s, p), offset: s });
      continue;
    }
    if (c === '.') {
      if (/[0-9]/.test(src[p + 1] ?? '')) {
        p = scanNumber(src, p);
        out.push({ type: 'number', value: src.slice(s, p), offset: s });
        continue;
      }
      p++;
      if (isAlnum(src[p] ?? '')) {
        while (p < src.length && isAlnum(src[p]!)) p++;
        out.push({ type: 'field', value: src.slice(s, p), offset: s });
      } else out.push({ type: 'dot', value: '.', offset: s });
      continue;
    }
    if (/[0-9+-]/.test(c)) {
      p = scanNumber(src, p);
      out.push({ type: 'number', value: src.slice(s, p), offset: s });
      continue;
    }
    if (isAlnum(c)) {
      while (p < src.length && isAlnum(src[p]!)) p++;
      const word = src.slice(s, p);
      const type: TokenType = KEYWORDS.has(word)
        ? 'keyword'
        : word === 'true' || word === 'false'
          ? 'bool'
          : word === 'nil'
            ? 'nil'
            : 'identifier';
      out.push({ type, value: word, offset: s });
      continue;
    }
    throw new TemplateSyntaxError(`unrecognized character in action: ${JSON.stringify(c)}`, p);
  }
}

function scanQuoted(src: string, p: number, quote: string): number {
  for (p++; p < src.length; p++) {
    const c = src[p];
    if (c === '\\') {
      p++;
      continue;
    }
    if (c === '\n') break;
    if (c === quote) return p + 1;
  }
  throw new TemplateSyntaxError(quote === '"' ? 'unterminated quoted string' : 'unterminated character constant', p);
}

function scanNumber(src: string, p: number): number {
  const m =
    /^[+-]?(0[xX][0-9a-fA-F_]*(\.[0-9a-fA-F_]*)?([pP][+-]?[0-9_]+)?|0[oO][0-7_]+|0[bB][01_]+|[0-9_]*(\.[0-9_]*)?([eE][+-]?[0-9_]+)?)i?/.exec(
      src.slice(p),
    );
  const end = p + (m ? m[0].length : 0);
  if (end === p || !/[0-9]/.test(src.slice(p, end)) || isAlnum(src[end] ?? '') || src[end] === '.') {
    let q = end;
    while (q < src.length && (isAlnum(src[q]!) || src[q] === '.')) q++;
    throw new TemplateSyntaxError(`bad number syntax: ${JSON.stringify(src.slice(p, Math.max(q, p + 1)))}`, p);
  }
  return end;
}
