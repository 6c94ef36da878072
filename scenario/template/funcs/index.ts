/**
 * The template function registry: text/template builtins plus the safe
 * helpers. Adding a function is one entry in helpers.ts and its Go twin in
 * test/gotemplate/funcs.go; the differential corpus then covers it.
 */
import { BUILTINS } from './builtins';
import { HELPERS } from './helpers';
import type { FuncMap, TemplateFunc } from './types';

export const TEMPLATE_FUNCS: FuncMap = new Map<string, TemplateFunc>([
  ...Object.entries(BUILTINS),
  ...Object.entries(HELPERS),
]);

export function hasTemplateFunction(name: string): boolean {
  return TEMPLATE_FUNCS.has(name);
}

export type { TemplateFunc, FuncMap, ParamKind } from './types';
export { FuncError } from './types';
