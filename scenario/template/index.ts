/**
 * `.tmpl` templates: Go text/template syntax and semantics, strict
 * (missingkey=error), with the safe function set in ./funcs. This is the
 * entry point the loader, render and soul-lint use.
 */
import { parseTemplate } from './parser';
import { executeTemplate, TemplateExecError, type ExecOptions } from './exec';
import { TemplateSyntaxError } from './lexer';
import { TEMPLATE_FUNCS, hasTemplateFunction } from './funcs';
import type { TemplateSet } from './ast';

export type { TemplateSet } from './ast';
export { TEMPLATE_FUNCS, hasTemplateFunction } from './funcs';
export { TemplateExecError } from './exec';
export { TemplateSyntaxError } from './lexer';

export type TemplateResult<T> =
  | { ok: true; value: T }
  | { ok: false; offset: number; message: string; kind: 'parse' | 'exec' };

/** Parses a template; unknown functions and undefined variables are parse errors, as in Go. */
export function compileTemplate(src: string): TemplateResult<TemplateSet> {
  try {
    return { ok: true, value: parseTemplate(src, hasTemplateFunction) };
  } catch (e) {
    if (e instanceof TemplateSyntaxError) return { ok: false, offset: e.offset, message: e.message, kind: 'parse' };
    throw e;
  }
}

export function runTemplate(set: TemplateSet, data: unknown, opts: Partial<ExecOptions> = {}): TemplateResult<string> {
  try {
    return { ok: true, value: executeTemplate(set, '', data, { funcs: TEMPLATE_FUNCS, ...opts }) };
  } catch (e) {
    if (e instanceof TemplateExecError) return { ok: false, offset: e.offset, message: e.message, kind: 'exec' };
    if (e instanceof RangeError)
      return { ok: false, offset: 0, message: `template too deeply nested: ${e.message}`, kind: 'exec' };
    throw e;
  }
}

/** Offsets of `${` in a template: the scenario interpolation marker is an error inside `.tmpl` files. */
export function findInterpolationMarkers(src: string): number[] {
  const out: number[] = [];
  for (let i = src.indexOf('${'); i >= 0; i = src.indexOf('${', i + 2)) out.push(i);
  return out;
}
