// Secrets as a type of their own (issue 12). A secret's value never travels as a bare string
// through the keeper: it is a SecretValue whose every printed form (String(), JSON.stringify,
// util.inspect, template literals) is the placeholder `«secret:<path>#<field>»`. Only
// `revealJson`, called by the hub when it encodes a step for the one soul that needs it, reads
// the value. So a logger, a problem body, a run report or an MCP answer that meets one prints
// the placeholder without knowing about secrets at all: redaction by type, not by field name.
import { inspect } from 'node:util';

export interface SecretRef {
  path: string;
  field: string;
}

/** `«secret:<path>#<field>»`: what every serializer prints in place of a value. */
export function placeholder(ref: SecretRef): string {
  return `«secret:${ref.path}#${ref.field}»`;
}

/** `secretstore:<path>#<field>`: the reference form kept in inputs, state and the database. */
export function referenceText(ref: SecretRef): string {
  return `secretstore:${ref.path}#${ref.field}`;
}

const SEGMENT = /^[A-Za-z0-9_.-]+$/;
const FIELD = /^[A-Za-z0-9_.-]{1,128}$/;
const REFERENCE = /^secretstore:([^#\s]+)#([^#\s]+)$/;

/**
 * Why `path` is not canonical, or null. A canonical path is the one text the store reads for it:
 * nothing the store (or a proxy before it) would collapse, decode or trim, so a check on the text
 * is a check on what is read (issue 28: `a/../../keeper` passed a prefix check and was collapsed).
 */
export function pathProblem(path: string): string | null {
  if (path === '') return 'it is empty';
  if (path.length > 512) return 'it is longer than 512 characters';
  if (/[\s\u0000-\u001f\u007f]/.test(path)) return 'it holds whitespace or a control character';
  if (path.includes('\\')) return 'it holds a backslash';
  if (path.includes('%')) return 'it holds "%" (percent-encoding is not decoded, so it is refused)';
  if (path.startsWith('/') || path.endsWith('/')) return 'it starts or ends with "/"';
  const segments = path.split('/');
  if (segments.some((x) => x === '')) return 'it holds an empty segment ("//")';
  if (segments.some((x) => /^\.+$/.test(x))) return 'it holds a "." or ".." segment';
  if (!segments.every((x) => SEGMENT.test(x)))
    return 'it holds a character other than letters, digits, "_", "-", "." and "/"';
  return null;
}

/** Why `path`/`field` is not a secret reference, or null when it is one. */
export function refProblem(path: string, field: string): string | null {
  const bad = pathProblem(path);
  if (bad) return `${JSON.stringify(path)} is not a canonical secrets-store path: ${bad}`;
  if (!FIELD.test(field)) return `${JSON.stringify(field)} is not a field name (letters, digits, "_-.")`;
  return null;
}

/** Parses `secretstore:<path>#<field>`; null when `text` is not one (or its path is not canonical). */
export function parseReference(text: string): SecretRef | null {
  const m = REFERENCE.exec(text);
  if (!m || refProblem(m[1]!, m[2]!) !== null) return null;
  return { path: m[1]!, field: m[2]! };
}

/**
 * True when `path` is `prefix` itself or lies below it, compared segment by segment on canonical
 * text: a path or prefix that is not canonical is under nothing (a declared prefix may end in "/").
 */
export function underPrefix(path: string, prefix: string): boolean {
  const p = prefix.endsWith('/') ? prefix.slice(0, -1) : prefix;
  if (pathProblem(path) !== null || pathProblem(p) !== null) return false;
  const want = p.split('/');
  const have = path.split('/');
  return want.length <= have.length && want.every((x, i) => have[i] === x);
}

const values = new WeakMap<SecretValue, string>();

/** A resolved secret. The value is held outside the object, so no enumeration can reach it. */
export class SecretValue {
  constructor(
    readonly ref: SecretRef,
    value: string,
  ) {
    values.set(this, value);
    Object.freeze(this);
  }
  toString(): string {
    return placeholder(this.ref);
  }
  toJSON(): string {
    return placeholder(this.ref);
  }
  [inspect.custom](): string {
    return placeholder(this.ref);
  }
  get [Symbol.toStringTag](): string {
    return placeholder(this.ref);
  }
}

/** A string built from text and secrets (a rendered file with a password in it). */
export class SecretText {
  constructor(readonly parts: ReadonlyArray<string | SecretValue>) {
    Object.freeze(this);
  }
  toString(): string {
    return this.parts.map(String).join('');
  }
  toJSON(): string {
    return this.toString();
  }
  [inspect.custom](): string {
    return this.toString();
  }
  get refs(): SecretRef[] {
    return this.parts.filter((p): p is SecretValue => p instanceof SecretValue).map((p) => p.ref);
  }
}

export function isSecret(v: unknown): v is SecretValue | SecretText {
  return v instanceof SecretValue || v instanceof SecretText;
}

function reveal(v: unknown): unknown {
  if (v instanceof SecretValue) return values.get(v);
  if (v instanceof SecretText) return v.parts.map((p) => (p instanceof SecretValue ? values.get(p) : p)).join('');
  if (Array.isArray(v)) return v.map(reveal);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = reveal(x);
    return out;
  }
  return v;
}

/**
 * JSON with the values in. The one place a value becomes text again: the hub's encoding of a step
 * for the soul's own authenticated stream (hub/session.ts). Nothing else may call it.
 */
export function revealJson(v: unknown): string {
  return JSON.stringify(reveal(v));
}

/**
 * Each value with its placeholder, for the soul to scrub its own ledger (proto StepRequest.redact).
 * Like revealJson, only the hub's encoding for the soul's own stream may call it: the soul was sent
 * every one of these values before.
 */
export function redactions(secrets: Iterable<SecretValue>): Array<{ value: string; placeholder: string }> {
  const out: Array<{ value: string; placeholder: string }> = [];
  for (const s of secrets) {
    const v = values.get(s);
    if (v && v.length >= 4) out.push({ value: v, placeholder: placeholder(s.ref) });
  }
  return out;
}

/** Replaces every occurrence of each value in `text` by its placeholder (a soul's answer echoing one). */
export function scrubValues(text: string, secrets: Iterable<SecretValue>): string {
  let out = text;
  for (const s of secrets) {
    const v = values.get(s);
    if (v && v.length >= 4) out = out.split(v).join(placeholder(s.ref));
  }
  return out;
}

/**
 * Where the keeper stores values given to an incarnation's secret inputs (docs/secrets.md): below
 * its name and its `secrets_key` (the apply_id of the run or plan that created it), so a new
 * incarnation with a deleted one's name cannot reach the deleted one's values. An incarnation made
 * before the key existed (null) keeps the prefix of its name alone.
 */
export function incarnationSecretPrefix(
  scenarioPrefix: string,
  incarnation: { name: string; secrets_key: string | null },
): string {
  const base = `${scenarioPrefix.replace(/\/+$/, '')}/incarnations/${incarnation.name}/`;
  return incarnation.secrets_key === null ? base : `${base}${incarnation.secrets_key}/`;
}
