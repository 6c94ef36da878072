// The shared implementation of the modules that edit part of a file someone else owns
// (core.line.*, core.block.present, core.ini.set, core.cron.present): read the file, compute the
// new text with the module's pure edit function, and write it back atomically keeping the file's
// mode and owner (a new file: 0644, root, parents made). The plan names what changes and, when the
// keeper allows content (a step without secrets), carries the unified diff of the changed hunks
// only; otherwise hashes and sizes, as core.file.present.
import { createHash } from 'node:crypto';
import { ensureParents, writeAtomic } from './atomic-write';
import { canonicalTarget, readTarget, type FileSnapshot } from './file-target';
import { formatMode } from './file-state';
import { ParamError } from './params';
import { defineState, type Change } from './shape';
import type { StateModule } from './types';
import { MAX_DIFF_INPUT, isText, unifiedDiff } from './unified-diff';

/** A text as lines, and whether it ends with a newline. '' is no lines. */
export interface Lines {
  lines: string[];
  eol: boolean;
}

export function splitLines(s: string): Lines {
  if (s === '') return { lines: [], eol: true };
  const parts = s.split('\n');
  const eol = s.endsWith('\n');
  if (eol) parts.pop();
  return { lines: parts, eol };
}

export function joinLines(t: Lines): string {
  return t.lines.length === 0 ? '' : `${t.lines.join('\n')}${t.eol ? '\n' : ''}`;
}

/** A line without the carriage return a CRLF file leaves on it, for comparisons. */
export const bare = (line: string): string => (line.endsWith('\r') ? line.slice(0, -1) : line);

/** What an edit did, in a phrase ("line 3 replaced"), and the text after it. */
export interface Edit {
  after: string;
  what: string;
}

/** Compiles a regexp param, naming it and the fix when it does not compile. */
export function compileParam(param: string, source: string): RegExp {
  try {
    return new RegExp(source);
  } catch (err) {
    throw new ParamError(
      `param "${param}" is not a valid JavaScript regular expression (${(err as Error).message}); fix the expression`,
    );
  }
}

/** The mode and owner a file must have whatever it had (cron reads only root's, not group-writable). */
export interface Fixed {
  mode: number;
  uid: number;
  gid: number;
}

export interface TextEditSpec<P extends { path: string }> {
  name: string;
  parse(raw: unknown): P;
  /** A missing file: edited as empty text (`create`), a failure naming the `create` param (`fail`),
   *  or nothing to do (`nothing`: a removal). */
  missing(p: P): 'create' | 'fail' | 'nothing';
  /** The new text, or null when the text is already as desired. Throws for a file it cannot edit. */
  edit(p: P, before: string): Edit | null;
  /** What holds, for the unchanged report: "the line is in /etc/x". */
  describe(p: P, exists: boolean): string;
  fixed?: (p: P) => Fixed;
}

/** Mode of a file a text edit creates. */
export const NEW_FILE_MODE = 0o644;

interface Current {
  file: FileSnapshot;
  edit: Edit | null;
  /** In a plan, when an earlier step of it would change the file first. */
  note: string;
}

// A plan reads the file as it is: an earlier step of the same plan that would change it first
// (core.file.present, another edit of it) has not run, so this step's plan says it may differ.
const EARLIER_NOTE = '; planned on the file as it is now, which an earlier step of this plan changes first';

const digest = (b: Buffer) => ({ sha256: createHash('sha256').update(b).digest('hex'), size: b.length });

export function defineTextEdit<P extends { path: string }>(spec: TextEditSpec<P>): StateModule {
  return defineState<P, Current>({
    name: spec.name,
    parse: spec.parse,
    async read(p, ctx) {
      const note = ctx.dryRun && ctx.earlier?.some((e) => e.changed && e.paths.includes(p.path)) ? EARLIER_NOTE : '';
      const file = await readTarget(p.path);
      if (!file.exists) {
        const how = spec.missing(p);
        if (how === 'nothing') return { file, edit: null, note };
        if (how === 'fail' && note === '')
          throw new Error(`${p.path} does not exist; create it in an earlier step, or set param "create": true`);
        // Missing now but created by an earlier step of this plan: planned as on an empty file.
        return { file, edit: spec.edit(p, '') ?? { after: '', what: 'empty file' }, note };
      }
      const content = file.content!;
      if (!isText(content)) throw new Error(`${p.path} is not a UTF-8 text file; this module edits text only`);
      return { file, edit: spec.edit(p, content.toString('utf8')), note };
    },
    diff(p, { file, edit, note }, ctx): Change | null {
      const fixed = spec.fixed?.(p);
      const parts: string[] = [];
      const diff: Record<string, unknown> = { path: p.path };
      if (edit) {
        parts.push(edit.what);
        const before = file.content ?? Buffer.alloc(0);
        const after = Buffer.from(edit.after, 'utf8');
        diff.edit = edit.what;
        diff.content = { ...(file.exists ? { before: digest(before) } : {}), after: digest(after) };
        // Content only in a plan the keeper allows it for (the step holds no secret); hunks only.
        if (ctx.dryRun && ctx.showContent === true) {
          if (before.length > MAX_DIFF_INPUT || after.length > MAX_DIFF_INPUT)
            diff.unified_withheld = `larger than ${MAX_DIFF_INPUT} bytes`;
          else diff.unified = unifiedDiff(before.toString('utf8'), edit.after, p.path);
        }
      }
      if (file.exists && fixed) {
        if (file.mode !== fixed.mode) {
          parts.push(`mode ${formatMode(file.mode ?? 0)}->${formatMode(fixed.mode)}`);
          diff.mode = { from: formatMode(file.mode ?? 0), to: formatMode(fixed.mode) };
        }
        if (file.uid !== fixed.uid || file.gid !== fixed.gid) {
          parts.push(`owner ${file.uid}:${file.gid}->${fixed.uid}:${fixed.gid}`);
          diff.owner = { from: `${file.uid}:${file.gid}`, to: `${fixed.uid}:${fixed.gid}` };
        }
      }
      if (parts.length === 0) return null;
      if (!file.exists) {
        diff.created = true;
        return { summary: `create ${p.path} (${parts.join(', ')})${note}`, diff };
      }
      return { summary: `update ${p.path} (${parts.join(', ')})${note}`, diff };
    },
    describe: (p, { file, note }) => `${spec.describe(p, file.exists)}${note}`,
    async apply(p, { file, edit }, change) {
      const fixed = spec.fixed?.(p);
      if (!file.exists) await ensureParents(p.path);
      const uid = fixed?.uid ?? file.uid;
      const gid = fixed?.gid ?? file.gid;
      await writeAtomic({
        path: p.path,
        content: edit ? Buffer.from(edit.after, 'utf8') : (file.content ?? Buffer.alloc(0)),
        // A rewrite keeps the file's mode and owner: the rest of the file is its owner's.
        mode: fixed?.mode ?? file.mode ?? NEW_FILE_MODE,
        ...(uid === undefined ? {} : { uid }),
        ...(gid === undefined ? {} : { gid }),
      });
      return change.summary.replace(/^update /, 'updated ').replace(/^create /, 'created ');
    },
  });
}

/** The `path` param: absolute and canonical. */
export const targetPath = (raw: string): string => canonicalTarget(raw);

/** Where a new line or block goes: after the last line matching `after` (EOF: at the end), before
 *  the last line matching `before` (BOF: at the top); no match or neither given: at the end. As
 *  Ansible's lineinfile, the last match counts. Returns the index to insert at. */
export function insertIndex(lines: readonly string[], at: { after?: RegExp | 'EOF'; before?: RegExp | 'BOF' }): number {
  if (at.before === 'BOF') return 0;
  const re = at.after instanceof RegExp ? at.after : at.before instanceof RegExp ? at.before : undefined;
  if (!re) return lines.length;
  let last = -1;
  for (const [i, l] of lines.entries()) if (re.test(bare(l))) last = i;
  if (last < 0) return lines.length;
  return at.after instanceof RegExp ? last + 1 : last;
}

/** Phrase for an insertion at `index` of a text of `count` lines. */
export function wherePhrase(index: number, count: number): string {
  if (count === 0) return 'into the empty file';
  if (index === 0) return 'at the top';
  if (index >= count) return 'at the end';
  return `after line ${index}`;
}

/** Reads an optional boolean param. */
export function optionalBool(p: Record<string, unknown>, key: string): boolean | undefined {
  const v = p[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new ParamError(`param "${key}" must be true or false`);
  return v;
}
