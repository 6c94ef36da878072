/**
 * How a secret travels through render: as a marker string
 * `«secret:<path>#<field>@<nonce>»`. Render never holds a value (issue 12:
 * resolution at the last moment); `secretstore(...)` and secret inputs give
 * a marker, which `${...}` and templates splice into text like any string.
 * The dispatching keeper replaces markers by values when it sends a host its
 * step. The nonce is the run's own, so text that merely looks like a marker
 * (a host fact, a plain input) is never resolved.
 */
import type { SecretRef } from '../../common/secret';

const MARKER = /«secret:([A-Za-z0-9_./-]+)#([A-Za-z0-9_.-]+)@([0-9a-f]{24})»/g;

export function makeMarker(ref: SecretRef, nonce: string): string {
  return `«secret:${ref.path}#${ref.field}@${nonce}»`;
}

export type MarkerPart = string | { ref: SecretRef };

/** Splits `text` into text and the run's markers; markers with another nonce stay text. */
export function splitMarkers(text: string, nonce: string): MarkerPart[] {
  const parts: MarkerPart[] = [];
  let last = 0;
  for (const m of text.matchAll(MARKER)) {
    if (m[3] !== nonce) continue;
    if (m.index! > last) parts.push(text.slice(last, m.index));
    parts.push({ ref: { path: m[1]!, field: m[2]! } });
    last = m.index! + m[0].length;
  }
  if (last < text.length || parts.length === 0) parts.push(text.slice(last));
  return parts;
}

/** The ref when `text` is exactly one marker of this run. */
export function wholeMarker(text: string, nonce: string): SecretRef | null {
  const parts = splitMarkers(text, nonce);
  return parts.length === 1 && typeof parts[0] !== 'string' ? parts[0]!.ref : null;
}

/** True when the nonce appears outside a whole marker: a secret went through a transformation. */
export function mangled(text: string, nonce: string): boolean {
  const rest = splitMarkers(text, nonce).filter((p): p is string => typeof p === 'string').join('');
  return rest.toLowerCase().includes(nonce);
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
