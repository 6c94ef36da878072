// What an apply-time expression read, for the run report: `failed_when: input.broken && result.ok`
// is true is only half an answer; the operator needs the values that made it true. The names are the
// dotted paths in the source (outside string literals), each evaluated in the same context.
const STRING_LITERAL = /"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g;
const DOTTED_PATH = /(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+/g;
/** Enough to explain a verdict; a report line must stay short. */
const MAX_NAMES = 8;
const MAX_VALUE_CHARS = 120;

export function expressionValues(src: string, evaluate: (path: string) => unknown): string {
  const text = src.replace(STRING_LITERAL, '""');
  const found: string[] = [];
  for (const m of text.matchAll(DOTTED_PATH)) {
    // `a.b.contains(...)`: the last segment is a method; the value read is `a.b`.
    const call = /^\s*\(/.test(text.slice(m.index + m[0].length));
    const p = call ? m[0].slice(0, m[0].lastIndexOf('.')) : m[0];
    if (p.includes('.')) found.push(p);
  }
  const paths = [...new Set(found)].slice(0, MAX_NAMES);
  const parts: string[] = [];
  for (const p of paths) {
    let shown: string;
    try {
      const v = evaluate(p);
      shown = typeof v === 'bigint' ? v.toString() : (JSON.stringify(v) ?? String(v));
    } catch {
      continue; // a path that is a function call's receiver or a missing key: nothing to show
    }
    parts.push(`${p} = ${shown.length > MAX_VALUE_CHARS ? `${shown.slice(0, MAX_VALUE_CHARS)}…` : shown}`);
  }
  return parts.join(', ');
}
