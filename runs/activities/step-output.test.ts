import assert from 'node:assert/strict';
import { cleanStepOutput, MAX_STEP_OUTPUT_BYTES } from './step-output';

describe('step output: escaped and capped', () => {
  it('escapes ESC sequences, other C0 but \\n and \\t, DEL and C1; keeps text and non-ASCII as they are', () => {
    assert.equal(
      cleanStepOutput('\u001b]0;owned\u0007\u001b[2J\r\tok\nnext\u0000\u007f\u009b31m é ✓'),
      '\\x1b]0;owned\\x07\\x1b[2J\\x0d\tok\nnext\\x00\\x7f\\x9b31m é ✓',
    );
    assert.equal(cleanStepOutput('plain output\n'), 'plain output\n');
  });

  it('keeps 64 KiB of a 3 MiB output and counts the rest in bytes of what the host sent', () => {
    const raw = '\u001b[31mred\u001b[0m '.repeat((3 * 1024 * 1024) / 14);
    const out = cleanStepOutput(raw);
    const [kept, marker] = out.split('\n... ');
    assert.ok(Buffer.byteLength(kept!) <= MAX_STEP_OUTPUT_BYTES);
    assert.ok(Buffer.byteLength(kept!) > MAX_STEP_OUTPUT_BYTES - 8);
    assert.ok(!/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(out));
    const rest = Number(/^(\d+) more bytes$/.exec(marker!)![1]);
    const keptRaw = kept!.replace(/\\x1b/g, '\u001b');
    assert.equal(rest, Buffer.byteLength(raw) - Buffer.byteLength(keptRaw));
  });

  it('never cuts a multi-byte character', () => {
    const out = cleanStepOutput('✓'.repeat(40_000), 100);
    assert.equal(out, `${'✓'.repeat(33)}\n... ${(40_000 - 33) * 3} more bytes`);
  });
});
