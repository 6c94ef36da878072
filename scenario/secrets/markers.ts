/**
 * How a secret travels (issue 28: a secret reference cannot be made from text).
 *
 * During render, `secretstore(...)` and secret inputs give a marker `«secret:<token>»`: the token is
 * fresh random bytes per recorded secret and per render (scenario/secrets/record.ts), never derived
 * from anything a scenario sees, so a scenario can only copy a marker it was given, never build
 * one. After render every such marker becomes a handle `«secret:<n>»`, an index into the step's own
 * list of secrets, each entry authenticated by the keeper (scenario/secrets/handles.ts). Both forms
 * start with `«secret:`, which is how the rest of the keeper knows a step carries a secret.
 */
export const SECRET_MARK = '«secret:';

const TOKEN_MARKER = /^«secret:([0-9a-f]{32})»/;
const HANDLE = /^«secret:(\d{1,4})»/;

export function tokenMarker(token: string): string {
  return `${SECRET_MARK}${token}»`;
}

export function handleMarker(n: number): string {
  return `${SECRET_MARK}${n}»`;
}

/** Text, or one whole marker (its token or handle number). */
export type MarkerPart<T> = string | { marker: T };

/**
 * Splits `text` at every `«secret:`. A whole marker of the form `re` describes becomes a part;
 * `bad` is set when some `«secret:` does not start one (text that merely looks like a marker:
 * forged, cut, or of another form), and that text stays in the string parts.
 */
function split<T>(text: string, re: RegExp, conv: (m: string) => T): { parts: MarkerPart<T>[]; bad: boolean } {
  const parts: MarkerPart<T>[] = [];
  let bad = false;
  let last = 0;
  let at = text.indexOf(SECRET_MARK);
  while (at >= 0) {
    const m = re.exec(text.slice(at));
    if (m) {
      if (at > last) parts.push(text.slice(last, at));
      parts.push({ marker: conv(m[1]!) });
      last = at + m[0].length;
      at = text.indexOf(SECRET_MARK, last);
    } else {
      bad = true;
      at = text.indexOf(SECRET_MARK, at + 1);
    }
  }
  if (last < text.length || parts.length === 0) parts.push(text.slice(last));
  return { parts, bad };
}

/** Render's markers in `text` (tokens, not yet checked against the record). */
export function splitTokens(text: string): { parts: MarkerPart<string>[]; bad: boolean } {
  return split(text, TOKEN_MARKER, (m) => m);
}

/** A stored step's handles in `text` (numbers, not yet checked against the step's entries). */
export function splitHandles(text: string): { parts: MarkerPart<number>[]; bad: boolean } {
  return split(text, HANDLE, (m) => Number(m));
}

/** Every string in a JSON-like tree, with a setter, for the checks and rewrites after render. */
export function mapStrings(v: unknown, fn: (s: string) => unknown): unknown {
  if (typeof v === 'string') return fn(v);
  if (Array.isArray(v)) return v.map((x) => mapStrings(x, fn));
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = mapStrings(x, fn);
    return out;
  }
  return v;
}
