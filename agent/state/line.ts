// core.line.present { path, line, regexp?, insertafter?, insertbefore?, create? } and
// core.line.absent { path, regexp | line }: one line of a file someone else owns (Ansible's
// lineinfile). Present: the last line matching `regexp` becomes `line`; without a match, a file
// that already holds `line` is left alone; otherwise `line` is inserted after (before) the last line
// matching `insertafter` (`insertbefore`), at the end when nothing matches. Absent: every line
// matching `regexp` (or equal to `line`) is removed. The rest of the file is kept byte for byte.
import { ParamError, optionalString, readParams, requireString } from './params';
import {
  bare,
  compileParam,
  defineTextEdit,
  insertIndex,
  joinLines,
  optionalBool,
  splitLines,
  targetPath,
  wherePhrase,
  type Edit,
} from './text-edit';
import type { StateDeps, StateModule } from './types';

export interface LinePresent {
  path: string;
  line: string;
  regexp?: RegExp;
  insertafter?: RegExp | 'EOF';
  insertbefore?: RegExp | 'BOF';
  create: boolean;
}

export interface LineAbsent {
  path: string;
  match: RegExp | string;
}

function oneLine(p: Record<string, unknown>, key: string): string {
  const v = requireString(p, key);
  if (/[\n\r]/.test(v))
    throw new ParamError(`param "${key}" must be one line (no newline); for lines use core.block.present`);
  return v;
}

export function parseLinePresent(raw: unknown): LinePresent {
  const p = readParams(raw, ['path', 'line', 'regexp', 'insertafter', 'insertbefore', 'create']);
  const regexp = optionalString(p, 'regexp');
  const after = optionalString(p, 'insertafter');
  const before = optionalString(p, 'insertbefore');
  if (after !== undefined && before !== undefined)
    throw new ParamError('params "insertafter" and "insertbefore" exclude each other; keep one');
  return {
    path: targetPath(requireString(p, 'path')),
    line: oneLine(p, 'line'),
    ...(regexp === undefined ? {} : { regexp: compileParam('regexp', regexp) }),
    ...(after === undefined ? {} : { insertafter: after === 'EOF' ? 'EOF' : compileParam('insertafter', after) }),
    ...(before === undefined ? {} : { insertbefore: before === 'BOF' ? 'BOF' : compileParam('insertbefore', before) }),
    create: optionalBool(p, 'create') ?? false,
  };
}

export function parseLineAbsent(raw: unknown): LineAbsent {
  const p = readParams(raw, ['path', 'line', 'regexp']);
  const regexp = optionalString(p, 'regexp');
  const line = p.line === undefined ? undefined : oneLine(p, 'line');
  if ((regexp === undefined) === (line === undefined))
    throw new ParamError('give exactly one of params "regexp" (lines matching it) and "line" (lines equal to it)');
  return {
    path: targetPath(requireString(p, 'path')),
    match: regexp !== undefined ? compileParam('regexp', regexp) : line!,
  };
}

/** The text with `line` in place, or null when it is there already. */
export function editLinePresent(p: Omit<LinePresent, 'path' | 'create'>, text: string): Edit | null {
  const t = splitLines(text);
  if (p.regexp) {
    let last = -1;
    for (const [i, l] of t.lines.entries()) if (p.regexp.test(bare(l))) last = i;
    if (last >= 0) {
      const old = t.lines[last]!;
      if (bare(old) === p.line) return null;
      // A CRLF file keeps its line ending on the replaced line.
      t.lines[last] = old.endsWith('\r') ? `${p.line}\r` : p.line;
      return { after: joinLines(t), what: `line ${last + 1} replaced` };
    }
  }
  if (t.lines.some((l) => bare(l) === p.line)) return null;
  const at = insertIndex(t.lines, {
    ...(p.insertafter === undefined ? {} : { after: p.insertafter }),
    ...(p.insertbefore === undefined ? {} : { before: p.insertbefore }),
  });
  const what = `line inserted ${wherePhrase(at, t.lines.length)}`;
  t.lines.splice(at, 0, p.line);
  // Appending to a file without a final newline ends the old last line first, as Ansible does.
  if (at === t.lines.length - 1) t.eol = true;
  return { after: joinLines(t), what };
}

/** The text without the matching lines, or null when none matches. */
export function editLineAbsent(p: Omit<LineAbsent, 'path'>, text: string): Edit | null {
  const t = splitLines(text);
  const gone: number[] = [];
  const kept = t.lines.filter((l, i) => {
    const hit = typeof p.match === 'string' ? bare(l) === p.match : p.match.test(bare(l));
    if (hit) gone.push(i + 1);
    return !hit;
  });
  if (gone.length === 0) return null;
  const shown = gone.length > 10 ? `${gone.slice(0, 10).join(', ')}, ...` : gone.join(', ');
  return {
    after: joinLines({ lines: kept, eol: t.eol }),
    what: `${gone.length} line${gone.length > 1 ? 's' : ''} removed (line${gone.length > 1 ? 's' : ''} ${shown})`,
  };
}

export const createLinePresent = (_deps: StateDeps): StateModule =>
  defineTextEdit<LinePresent>({
    name: 'core.line.present',
    parse: parseLinePresent,
    missing: (p) => (p.create ? 'create' : 'fail'),
    edit: editLinePresent,
    describe: (p) => `${p.path} already has the line`,
  });

export const createLineAbsent = (_deps: StateDeps): StateModule =>
  defineTextEdit<LineAbsent>({
    name: 'core.line.absent',
    parse: parseLineAbsent,
    missing: () => 'nothing',
    edit: editLineAbsent,
    describe: (p, exists) =>
      exists
        ? `no line of ${p.path} ${typeof p.match === 'string' ? 'is the line' : 'matches'}`
        : `${p.path} does not exist`,
  });
