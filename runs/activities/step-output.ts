// A soul's step output as the keeper keeps it: terminal control characters escaped and the text
// capped. The output is whatever the host sends (a compromised host, or a module echoing a file,
// can send megabytes of ESC sequences), and it is stored in run_steps and served by the API, the UI,
// MCP and keeperctl, where an ESC sequence would drive the reader's terminal (retitle it, rewrite
// what is on screen, or worse). One place, where apply-host receives the answer, so an agent soul
// and an SSH soul get the same; after the secret scrubbing (which must see the whole text).

/** Bytes of (escaped) output kept per step; the rest is counted, not stored. */
export const MAX_STEP_OUTPUT_BYTES = 64 * 1024;

// C0 except \t and \n (\r included: it rewrites the line on screen), DEL, and C1 (U+0080-U+009F,
// which some terminals read as CSI and friends).
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
const CONTROLS = new RegExp(CONTROL.source, 'g');

const escapeOne = (c: string): string => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;

/** Escapes control characters as `\xHH` and keeps at most MAX_STEP_OUTPUT_BYTES of the result. */
export function cleanStepOutput(raw: string, maxBytes = MAX_STEP_OUTPUT_BYTES): string {
  // Escaping at most quadruples a character's size: a short output needs no walk.
  if (raw.length * 4 <= maxBytes) return raw.replace(CONTROLS, escapeOne);
  const kept: string[] = [];
  let bytes = 0;
  let consumed = 0; // UTF-8 bytes of `raw` kept
  for (const ch of raw) {
    const out = CONTROL.test(ch) ? escapeOne(ch) : ch;
    const outBytes = Buffer.byteLength(out);
    if (bytes + outBytes > maxBytes) break;
    kept.push(out);
    bytes += outBytes;
    consumed += Buffer.byteLength(ch);
  }
  const rest = Buffer.byteLength(raw) - consumed;
  return rest === 0 ? kept.join('') : `${kept.join('')}\n... ${rest} more bytes`;
}
