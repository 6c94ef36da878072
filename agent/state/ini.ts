// core.ini.set { path, section?, key, value, create?, spaces? }: a key of an ini file's section has
// a value (Ansible's ini_file, Salt's ini.options_present). Only the lines that must change change:
// an existing key keeps its spacing and position (every occurrence of it in the section gets the
// value); a missing key goes after the last key of its section (`key = value`, or `key=value` with
// `spaces: false`); a missing section is added at the end. Without `section` the key is one of the
// lines before the first section header. Comments (# and ;) and blank lines are kept.
import { ParamError, optionalString, readParams, requireString } from './params';
import { bare, defineTextEdit, joinLines, optionalBool, splitLines, targetPath, type Edit } from './text-edit';
import type { StateDeps, StateModule } from './types';

export interface IniSet {
  path: string;
  /** undefined: the keys before the first section header. */
  section?: string;
  key: string;
  value: string;
  create: boolean;
  spaces: boolean;
}

export type IniLine =
  | { kind: 'section'; name: string }
  | { kind: 'key'; key: string; value: string /** the text up to the value: "key = " */; prefix: string }
  | { kind: 'other' };

/** What one line of an ini file is. A line without `=` is a key without a value (`allow_no_value`). */
export function classifyIniLine(raw: string): IniLine {
  const line = bare(raw);
  const t = line.trim();
  if (t === '' || t.startsWith('#') || t.startsWith(';')) return { kind: 'other' };
  if (t.startsWith('[') && t.endsWith(']')) return { kind: 'section', name: t.slice(1, -1).trim() };
  const eq = line.indexOf('=');
  if (eq < 0) return { kind: 'key', key: t, value: '', prefix: line };
  const rest = line.slice(eq + 1);
  const value = rest.trim();
  const lead = rest.length - rest.trimStart().length;
  return { kind: 'key', key: line.slice(0, eq).trim(), value, prefix: line.slice(0, eq + 1 + lead) };
}

export function parseIniSet(raw: unknown): IniSet {
  const p = readParams(raw, ['path', 'section', 'key', 'value', 'create', 'spaces']);
  const section = optionalString(p, 'section');
  const key = requireString(p, 'key');
  if (key === '' || key !== key.trim() || /[\n\r=]/.test(key) || /^[;#[]/.test(key))
    throw new ParamError(
      'param "key" must be a key name: one line, no "=", no space around it, not starting with # ; [',
    );
  if (section !== undefined && (section === '' || /[\n\r[\]]/.test(section)))
    throw new ParamError(
      'param "section" must be a section name without brackets or newline (leave it out for the keys before the first section)',
    );
  const v = p.value;
  if (typeof v !== 'string' && typeof v !== 'boolean' && !(typeof v === 'number' && Number.isInteger(v)))
    throw new ParamError('param "value" is required and must be a string, an integer or a boolean');
  const value = String(v);
  if (/[\n\r]/.test(value)) throw new ParamError('param "value" must be one line (no newline)');
  return {
    path: targetPath(requireString(p, 'path')),
    ...(section === undefined ? {} : { section: section.trim() }),
    key,
    value,
    create: optionalBool(p, 'create') ?? true,
    spaces: optionalBool(p, 'spaces') ?? true,
  };
}

/** The text with the key set, or null when every occurrence already has the value. */
export function editIni(p: Omit<IniSet, 'path' | 'create'>, text: string): Edit | null {
  const t = splitLines(text);
  const kinds = t.lines.map(classifyIniLine);
  const where = p.section === undefined ? 'before the first section' : `[${p.section}]`;
  // The section's extent: from its header (the first one of that name) to the next header.
  let start: number;
  if (p.section === undefined) start = 0;
  else {
    const h = kinds.findIndex((k) => k.kind === 'section' && k.name === p.section);
    if (h < 0) {
      // A new section goes at the end, after a blank line.
      const last = t.lines.length > 0 ? bare(t.lines[t.lines.length - 1]!).trim() : '';
      if (t.lines.length > 0 && last !== '') t.lines.push('');
      t.lines.push(`[${p.section}]`, newLine(p));
      t.eol = true;
      return { after: joinLines(t), what: `section [${p.section}] added with key ${p.key}` };
    }
    start = h + 1;
  }
  let stop = kinds.findIndex((k, i) => i >= start && k.kind === 'section');
  if (stop < 0) stop = kinds.length;
  const hits: number[] = [];
  for (let i = start; i < stop; i++) {
    const k = kinds[i]!;
    if (k.kind === 'key' && k.key === p.key) hits.push(i);
  }
  if (hits.length > 0) {
    const stale = hits.filter((i) => (kinds[i] as { value: string }).value !== p.value);
    if (stale.length === 0) return null;
    for (const i of stale) {
      const k = kinds[i] as { prefix: string; value: string };
      const cr = t.lines[i]!.endsWith('\r') ? '\r' : '';
      // A key written without "=" gets one; otherwise its own spacing stays.
      t.lines[i] = `${k.prefix.includes('=') ? k.prefix : keyPrefix(p)}${p.value}${cr}`;
    }
    return {
      after: joinLines(t),
      what: `key ${p.key} ${where} changed (line${stale.length > 1 ? 's' : ''} ${stale.map((i) => i + 1).join(', ')})`,
    };
  }
  // After the section's last key (or right after its header when it has none).
  let at = p.section === undefined ? 0 : start;
  for (let i = start; i < stop; i++) if (kinds[i]!.kind === 'key') at = i + 1;
  t.lines.splice(at, 0, newLine(p));
  if (at === t.lines.length - 1) t.eol = true;
  return { after: joinLines(t), what: `key ${p.key} added ${where} (line ${at + 1})` };
}

const keyPrefix = (p: Pick<IniSet, 'key' | 'spaces'>) => (p.spaces ? `${p.key} = ` : `${p.key}=`);
const newLine = (p: Pick<IniSet, 'key' | 'value' | 'spaces'>) => `${keyPrefix(p)}${p.value}`;

export const createIniSet = (_deps: StateDeps): StateModule =>
  defineTextEdit<IniSet>({
    name: 'core.ini.set',
    parse: parseIniSet,
    missing: (p) => (p.create ? 'create' : 'fail'),
    edit: editIni,
    describe: (p) => `${p.path}: ${p.key} ${p.section === undefined ? '' : `in [${p.section}] `}already has the value`,
  });
