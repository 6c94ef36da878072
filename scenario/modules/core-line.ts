import type { ModuleSpec } from './types';
import { ABS_PATH } from './core-file-present';

/** One line of text: no newline in it (a block of lines is core.block.present). */
export const ONE_LINE = { type: 'string', maxLength: 65536, pattern: '^[^\\n\\r]*$' } as const;
/** A JavaScript regular expression, searched in each line (not anchored unless it says ^ or $). */
export const REGEXP = { type: 'string', minLength: 1, maxLength: 4096 } as const;

type Problem = { param: string; message: string };

/** Why `value` is not a regular expression the soul can use, or undefined (also for a non-string). */
export function regexpProblem(param: string, value: unknown): Problem | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    new RegExp(value);
    return undefined;
  } catch (err) {
    // Python's named groups are the usual surprise for a port from Ansible or Salt.
    const hint = value.includes('(?P<') ? ' (a named group is (?<name>...), not (?P<name>...))' : '';
    return {
      param,
      message: `parameter "${param}" is not a valid JavaScript regular expression: ${(err as Error).message}${hint}; fix the expression, and escape a literal ( [ . * + ? with a backslash`,
    };
  }
}

/** `insertafter` (EOF or a regexp) and `insertbefore` (BOF or a regexp): one of them, each compiling. */
export function insertProblems(p: Record<string, unknown>): Problem[] {
  const out: Problem[] = [];
  if (p['insertafter'] !== undefined && p['insertbefore'] !== undefined)
    out.push({
      param: 'insertbefore',
      message: 'parameters "insertafter" and "insertbefore" exclude each other; keep one',
    });
  if (p['insertafter'] !== 'EOF') out.push(...[regexpProblem('insertafter', p['insertafter'])].filter(isProblem));
  if (p['insertbefore'] !== 'BOF') out.push(...[regexpProblem('insertbefore', p['insertbefore'])].filter(isProblem));
  return out;
}

export const isProblem = (p: Problem | undefined): p is Problem => p !== undefined;

/** A line is in a file: the last line matching `regexp` is replaced by `line`, else `line` is
 *  inserted (after/before a match, at the end by default), unless the file holds it already. */
export const coreLinePresent: ModuleSpec = {
  name: 'core.line.present',
  description: 'a line is in a file (replacing the line a regexp matches, or inserted)',
  params: {
    type: 'object',
    additionalProperties: false,
    required: ['path', 'line'],
    properties: {
      path: ABS_PATH,
      line: ONE_LINE,
      regexp: REGEXP,
      insertafter: REGEXP,
      insertbefore: REGEXP,
      create: { type: 'boolean' },
    },
  },
  check: (p) => [regexpProblem('regexp', p['regexp']), ...insertProblems(p)].filter(isProblem),
};

/** No line of the file matches `regexp` (or equals `line`): every such line is removed. */
export const coreLineAbsent: ModuleSpec = {
  name: 'core.line.absent',
  description: 'no line of a file matches a regexp (or equals a line)',
  params: {
    type: 'object',
    additionalProperties: false,
    required: ['path'],
    properties: {
      path: ABS_PATH,
      line: ONE_LINE,
      regexp: REGEXP,
    },
  },
  check: (p) => {
    const out = [regexpProblem('regexp', p['regexp'])].filter(isProblem);
    const given = ['line', 'regexp'].filter((k) => p[k] !== undefined);
    // soul-lint sees only static params: a missing one may be an expression, judged at render.
    if (given.length === 2)
      out.push({ param: 'line', message: 'parameters "line" and "regexp" exclude each other; keep one' });
    return out;
  },
};
