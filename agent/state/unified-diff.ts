// A unified diff of two texts (the `diff -u` format), for plans: what a file step would change in a
// file's content (docs/plans.md). Only for text the keeper allowed to be shown (no secret in the
// step), only for files up to MAX_DIFF_INPUT bytes, and the diff itself is cut at MAX_DIFF_OUTPUT:
// a plan is read by people, and stored.
//
// Lines are compared whole. The common head and tail are trimmed first, then the longest common
// subsequence of the middle is found by dynamic programming; a middle too large for that
// (MAX_CELLS) is shown as one hunk that removes all old lines and adds all new ones.

export const MAX_DIFF_INPUT = 256 * 1024;
export const MAX_DIFF_OUTPUT = 16 * 1024;
const MAX_CELLS = 4_000_000;
const CONTEXT = 3;

type Op = { kind: ' ' | '-' | '+'; text: string };

function lines(s: string): { lines: string[]; eofNewline: boolean } {
  if (s === '') return { lines: [], eofNewline: true };
  const eofNewline = s.endsWith('\n');
  const parts = s.split('\n');
  if (eofNewline) parts.pop();
  return { lines: parts, eofNewline };
}

function middleOps(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  if ((n + 1) * (m + 1) > MAX_CELLS)
    return [...a.map((text) => ({ kind: '-' as const, text })), ...b.map((text) => ({ kind: '+' as const, text }))];
  // lcs[i][j] = length of the LCS of a[i..] and b[j..], one flat array.
  const w = m + 1;
  const lcs = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * w + j] =
        a[i] === b[j] ? lcs[(i + 1) * w + j + 1]! + 1 : Math.max(lcs[(i + 1) * w + j]!, lcs[i * w + j + 1]!);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      ops.push({ kind: ' ', text: a[i]! });
      i++;
      j++;
    } else if (lcs[(i + 1) * w + j]! >= lcs[i * w + j + 1]!) ops.push({ kind: '-', text: a[i++]! });
    else ops.push({ kind: '+', text: b[j++]! });
  }
  while (i < n) ops.push({ kind: '-', text: a[i++]! });
  while (j < m) ops.push({ kind: '+', text: b[j++]! });
  return ops;
}

/** `--- a/<path>` / `+++ b/<path>` and the hunks; '' when the texts are equal. */
export function unifiedDiff(before: string, after: string, path: string): string {
  if (before === after) return '';
  const A = lines(before);
  const B = lines(after);
  let head = 0;
  while (head < A.lines.length && head < B.lines.length && A.lines[head] === B.lines[head]) head++;
  let tail = 0;
  while (
    tail < A.lines.length - head &&
    tail < B.lines.length - head &&
    A.lines[A.lines.length - 1 - tail] === B.lines[B.lines.length - 1 - tail]
  )
    tail++;
  const ops: Op[] = [
    ...A.lines.slice(0, head).map((text) => ({ kind: ' ' as const, text })),
    ...middleOps(A.lines.slice(head, A.lines.length - tail), B.lines.slice(head, B.lines.length - tail)),
    ...A.lines.slice(A.lines.length - tail).map((text) => ({ kind: ' ' as const, text })),
  ];
  // Only the missing newline at the end differs: show the last line as removed and added.
  if (ops.every((o) => o.kind === ' ') && ops.length > 0) {
    const last = ops.pop()!;
    ops.push({ kind: '-', text: last.text }, { kind: '+', text: last.text });
  }

  const out: string[] = [`--- a${path}`, `+++ b${path}`];
  // Positions (1-based) of each op in the old and new text.
  let oldLine = 1;
  let newLine = 1;
  const pos = ops.map((o) => {
    const p = { o: oldLine, n: newLine };
    if (o.kind !== '+') oldLine++;
    if (o.kind !== '-') newLine++;
    return p;
  });
  const changed = ops.map((o, k) => (o.kind !== ' ' ? k : -1)).filter((k) => k >= 0);
  let k = 0;
  while (k < changed.length) {
    const start = Math.max(0, changed[k]! - CONTEXT);
    let end = changed[k]!;
    while (k < changed.length && changed[k]! - end <= 2 * CONTEXT) end = changed[k++]!;
    const stop = Math.min(ops.length, end + CONTEXT + 1);
    const slice = ops.slice(start, stop);
    const oldCount = slice.filter((o) => o.kind !== '+').length;
    const newCount = slice.filter((o) => o.kind !== '-').length;
    const oldStart = oldCount === 0 ? pos[start]!.o - 1 : pos[start]!.o;
    const newStart = newCount === 0 ? pos[start]!.n - 1 : pos[start]!.n;
    out.push(`@@ -${oldStart},${oldCount} +${newStart},${newCount} @@`);
    for (let x = start; x < stop; x++) {
      const o = ops[x]!;
      out.push(`${o.kind}${o.text}`);
      // The last line of a side without a final newline says so, as diff -u does.
      const lastOld = o.kind !== '+' && pos[x]!.o === A.lines.length && !A.eofNewline;
      const lastNew = o.kind !== '-' && pos[x]!.n === B.lines.length && !B.eofNewline;
      if ((o.kind === '-' && lastOld) || (o.kind === '+' && lastNew) || (o.kind === ' ' && (lastOld || lastNew)))
        out.push('\\ No newline at end of file');
    }
  }
  const text = `${out.join('\n')}\n`;
  return text.length > MAX_DIFF_OUTPUT
    ? `${text.slice(0, MAX_DIFF_OUTPUT)}\n[diff cut at ${MAX_DIFF_OUTPUT} bytes]\n`
    : text;
}

/** Whether a buffer is text a person can read in a diff (UTF-8, no NUL). */
export function isText(b: Buffer): boolean {
  if (b.includes(0)) return false;
  return Buffer.from(b.toString('utf8'), 'utf8').equals(b);
}
