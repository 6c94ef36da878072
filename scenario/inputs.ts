/**
 * Input declarations: `input: {name: {type, default}}`. Types are the
 * JSON-ish ones a service author writes in YAML.
 */
import type { InputType } from './cel/env';
import type { InputDecl } from './model';

export function matchesType(value: unknown, type: InputType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isSafeInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'list':
      return Array.isArray(value);
    case 'map':
      return value !== null && typeof value === 'object' && !Array.isArray(value);
  }
}

export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a number';
  return `a ${typeof value}`;
}

export function inputTypes(inputs: Map<string, InputDecl>): Map<string, InputType> {
  return new Map([...inputs].map(([k, d]) => [k, d.type]));
}
