/**
 * `${ ... }` interpolation in YAML strings. A string that is exactly one
 * `${expr}` evaluates to the expression's value with its type kept; any
 * other string concatenates text and the values' text. `$${` writes a
 * literal `${`. The closing `}` is found with CEL string literals and
 * nested braces (map literals) taken into account.
 */
export type Segment = { kind: 'text'; text: string } | { kind: 'expr'; src: string; offset: number };

export type SplitResult = { ok: true; segments: Segment[] } | { ok: false; offset: number; message: string };

export function hasInterpolation(s: string): boolean {
  return s.includes('${');
}

export function splitInterpolation(s: string): SplitResult {
  const segments: Segment[] = [];
  let text = '';
  let i = 0;
  while (i < s.length) {
    if (s.startsWith('$${', i)) {
      text += '${';
      i += 3;
      continue;
    }
    if (!s.startsWith('${', i)) {
      text += s[i++];
      continue;
    }
    const start = i + 2;
    const end = findClose(s, start);
    if (end < 0) return { ok: false, offset: i, message: 'unterminated `${`: no matching `}`' };
    const src = s.slice(start, end);
    if (src.trim() === '') return { ok: false, offset: i, message: 'empty `${}` expression' };
    if (text) segments.push({ kind: 'text', text });
    text = '';
    segments.push({ kind: 'expr', src, offset: start });
    i = end + 1;
  }
  if (text || segments.length === 0) segments.push({ kind: 'text', text });
  return { ok: true, segments };
}

function findClose(s: string, from: number): number {
  let depth = 0;
  for (let i = from; i < s.length; i++) {
    const c = s[i];
    if (c === '"' || c === "'") {
      // Skip a CEL string literal (triple quotes included) with backslash escapes.
      const triple = s.startsWith(c.repeat(3), i);
      const close = triple ? c.repeat(3) : c;
      i += close.length;
      while (i < s.length && !s.startsWith(close, i)) i += s[i] === '\\' ? 2 : 1;
      if (i >= s.length) return -1;
      i += close.length - 1;
      continue;
    }
    if (c === '{') depth++;
    else if (c === '}') {
      if (depth === 0) return i;
      depth--;
    }
  }
  return -1;
}

/** A string that is exactly one `${expr}`: its value keeps the expression's type. */
export function wholeExpression(segments: Segment[]): Extract<Segment, { kind: 'expr' }> | null {
  return segments.length === 1 && segments[0]!.kind === 'expr' ? segments[0]! : null;
}
