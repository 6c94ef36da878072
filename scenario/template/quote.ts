/**
 * Go's strconv.Quote and QuoteRune, and the escapers behind the html, js and
 * urlquery template builtins. JSON.stringify and encodeURIComponent differ
 * from Go on several characters, and template output must be byte-equal.
 */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

function escapeRune(ch: string, quote: string): string {
  const cp = ch.codePointAt(0)!;
  if (ch === quote || ch === '\\') return '\\' + ch;
  if ((cp >= 0x20 && cp < 0x7f) || PRINTABLE.test(ch)) return ch;
  switch (ch) {
    case '\x07':
      return '\\a';
    case '\b':
      return '\\b';
    case '\f':
      return '\\f';
    case '\n':
      return '\\n';
    case '\r':
      return '\\r';
    case '\t':
      return '\\t';
    case '\v':
      return '\\v';
  }
  if (cp < 0x20 || cp === 0x7f) return '\\x' + cp.toString(16).padStart(2, '0');
  if (cp < 0x10000) return '\\u' + cp.toString(16).padStart(4, '0');
  return '\\U' + cp.toString(16).padStart(8, '0');
}

export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) out += escapeRune(ch, '"');
  return out + '"';
}

export function goQuoteRune(cp: number): string {
  return "'" + escapeRune(String.fromCodePoint(cp), "'") + "'";
}

/** text/template's html: HTMLEscapeString. */
export function htmlEscape(s: string): string {
  return s.replace(
    /[<>&'"\0]/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&#39;', '"': '&#34;', '\0': '\uFFFD' })[c]!,
  );
}

/** text/template's js: JSEscapeString. */
export function jsEscape(s: string): string {
  let out = '';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    switch (ch) {
      case '\\':
        out += '\\\\';
        continue;
      case "'":
        out += "\\'";
        continue;
      case '"':
        out += '\\"';
        continue;
      case '<':
        out += '\\u003C';
        continue;
      case '>':
        out += '\\u003E';
        continue;
      case '&':
        out += '\\u0026';
        continue;
      case '=':
        out += '\\u003D';
        continue;
    }
    if (cp < 0x80 ? cp >= 0x20 && cp < 0x7f : PRINTABLE.test(ch)) out += ch;
    else out += '\\u' + cp.toString(16).toUpperCase().padStart(4, '0');
  }
  return out;
}

/** text/template's urlquery: url.QueryEscape. */
export function queryEscape(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-_.~]/.test(c)) out += c;
    else if (c === ' ') out += '+';
    else out += '%' + byte.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}
