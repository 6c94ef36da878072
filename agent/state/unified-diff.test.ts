import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MAX_DIFF_OUTPUT, isText, unifiedDiff } from './unified-diff';

/** GNU diff -u's hunks for the same two texts: the format operators read every day. */
function gnuHunks(before: string, after: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'keeper-udiff-'));
  try {
    writeFileSync(path.join(dir, 'a'), before);
    writeFileSync(path.join(dir, 'b'), after);
    try {
      execFileSync('diff', ['-u', path.join(dir, 'a'), path.join(dir, 'b')]);
      return '';
    } catch (err) {
      return String((err as { stdout: Buffer }).stdout)
        .split('\n')
        .slice(2)
        .join('\n');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const hunks = (d: string) => d.split('\n').slice(2).join('\n');

describe('unified diff of a file content (plans)', () => {
  const lines = (n: number, f = (i: number) => `line ${i}`) =>
    Array.from({ length: n }, (_, i) => `${f(i + 1)}\n`).join('');
  const cases: [string, string, string][] = [
    ['one line changed in the middle', lines(20), lines(20, (i) => (i === 10 ? 'LINE TEN' : `line ${i}`))],
    [
      'two changes far apart make two hunks',
      lines(40),
      lines(40, (i) => (i === 3 || i === 35 ? `changed ${i}` : `line ${i}`)),
    ],
    [
      'two changes close together make one hunk',
      lines(30),
      lines(30, (i) => (i === 10 || i === 15 ? `changed ${i}` : `line ${i}`)),
    ],
    ['lines added at the end', lines(5), lines(8)],
    ['lines removed at the start', lines(8), lines(8).split('\n').slice(3).join('\n')],
    ['a new file', '', 'greeting=hello\nport=80\n'],
    ['the last newline removed', 'a\nb\n', 'a\nb'],
    ['a line changed without final newlines', 'a\nb', 'a\nc'],
  ];
  for (const [name, before, after] of cases) {
    it(`matches diff -u: ${name}`, () => {
      assert.equal(hunks(unifiedDiff(before, after, '/etc/app.conf')), gnuHunks(before, after));
    });
  }

  it('names the file and is empty for equal texts', () => {
    assert.equal(unifiedDiff('x\n', 'x\n', '/etc/x'), '');
    assert.match(unifiedDiff('x\n', 'y\n', '/etc/x'), /^--- a\/etc\/x\n\+\+\+ b\/etc\/x\n@@ -1,1 \+1,1 @@\n-x\n\+y\n$/);
  });

  it('cuts a huge diff and says so', () => {
    const d = unifiedDiff(
      lines(3000),
      lines(3000, (i) => `other ${i}`),
      '/big',
    );
    assert.ok(d.length <= MAX_DIFF_OUTPUT + 100);
    assert.match(d, /\[diff cut at 16384 bytes\]\n$/);
  });

  it('tells text from binary', () => {
    assert.equal(isText(Buffer.from('héllo\n')), true);
    assert.equal(isText(Buffer.from([0x68, 0x00, 0x69])), false);
    assert.equal(isText(Buffer.from([0xff, 0xfe, 0x41])), false);
  });
});
