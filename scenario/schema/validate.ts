/**
 * Runs a JSON schema over a positioned YAML tree and turns ajv's errors into
 * RenderErrors at the right `file:line:col`, with messages a service author
 * can act on (the key that is unknown, the key that is missing, the type
 * that was expected).
 */
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import type { YNode } from '../yaml/parse';
import { nodeAtPointer, toValue } from '../yaml/node';
import { makeError, type RenderError } from '../errors';

const ajv = new Ajv({ allErrors: true, strict: false });
const compiled = new WeakMap<object, ValidateFunction>();

export function validateNode(schema: object, node: YNode, rule: string, what: string): RenderError[] {
  let v = compiled.get(schema);
  if (!v) {
    v = ajv.compile(schema);
    compiled.set(schema, v);
  }
  if (v(toValue(node))) return [];
  const seen = new Set<string>();
  const out: RenderError[] = [];
  for (const e of prune(v.errors ?? [])) {
    const { at, message, fix } = explain(e, what);
    const pos = nodeAtPointer(node, at.pointer, at.key).pos;
    const key = `${pos.line}:${pos.col}:${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(makeError(pos, rule, message, fix));
  }
  return out;
}

/** anyOf produces one error per branch plus a summary; keep the summary only. */
function prune(errors: ErrorObject[]): ErrorObject[] {
  const anyOfPaths = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  return errors.filter((e) => e.keyword === 'anyOf' || !anyOfPaths.has(e.instancePath));
}

function field(pointer: string): string {
  const parts = pointer.split('/').filter(Boolean);
  return parts.length
    ? parts
        .map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`))
        .join('')
        .replace(/^\./, '')
    : '(document)';
}

function explain(
  e: ErrorObject,
  what: string,
): { at: { pointer: string; key: boolean }; message: string; fix: string } {
  const p = e.params as Record<string, unknown>;
  const name = field(e.instancePath);
  switch (e.keyword) {
    case 'additionalProperties': {
      const k = String(p['additionalProperty']);
      return {
        at: { pointer: `${e.instancePath}/${k}`, key: true },
        message: `unknown key "${k}" in ${e.instancePath ? name : what}`,
        fix: `remove "${k}" or check its spelling`,
      };
    }
    case 'required': {
      const k = String(p['missingProperty']);
      return {
        at: { pointer: e.instancePath, key: false },
        message: `missing required key "${k}" in ${e.instancePath ? name : what}`,
        fix: `add "${k}"`,
      };
    }
    case 'type':
      return {
        at: { pointer: e.instancePath, key: false },
        message: `${name} must be ${article(String(p['type']))}`,
        fix: `change ${name} to ${article(String(p['type']))}`,
      };
    case 'enum':
      return {
        at: { pointer: e.instancePath, key: false },
        message: `${name} must be one of ${(p['allowedValues'] as unknown[]).join(', ')}`,
        fix: 'use one of the allowed values',
      };
    case 'anyOf':
      return {
        at: { pointer: e.instancePath, key: false },
        message: `${name} has the wrong shape`,
        fix: shapeHint(name),
      };
    case 'propertyNames':
      return {
        at: { pointer: e.instancePath, key: false },
        message: `${name} has an invalid key name "${String(p['propertyName'])}"`,
        fix: 'use lower-case letters, digits and _',
      };
    default:
      return {
        at: { pointer: e.instancePath, key: false },
        message: `${name} ${e.message ?? 'is invalid'}`,
        fix: `fix ${name}`,
      };
  }
}

function article(t: string): string {
  const map: Record<string, string> = {
    object: 'a mapping',
    array: 'a list',
    string: 'a string',
    integer: 'an integer',
    number: 'a number',
    boolean: 'a boolean',
  };
  return map[t] ?? t;
}

function shapeHint(name: string): string {
  if (/serial$/.test(name)) return 'use a positive integer or a percentage like "25%"';
  if (/(when|until|where)$/.test(name)) return 'write one CEL expression as a string';
  return 'use a string or a list of strings';
}
