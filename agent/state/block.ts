// core.block.present { path, name, content, marker?, insertafter?, insertbefore?, create? }: the
// lines between `# BEGIN KEEPER <name>` and `# END KEEPER <name>` are exactly `content` (Ansible's
// blockinfile, Salt's file.blockreplace). A file without the block gets it, markers included,
// after (before) the last line matching `insertafter` (`insertbefore`), else at the end. Empty
// `content` means no block: the block and its markers are removed. The rest of the file is kept.
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

export const DEFAULT_MARKER = '# {mark} KEEPER {name}';

export interface BlockPresent {
  path: string;
  name: string;
  /** The block's lines; none: no block. */
  content: string[];
  begin: string;
  end: string;
  insertafter?: RegExp | 'EOF';
  insertbefore?: RegExp | 'BOF';
  create: boolean;
}

export function markers(marker: string, name: string): { begin: string; end: string } {
  const fill = (mark: string) => marker.split('{mark}').join(mark).split('{name}').join(name);
  return { begin: fill('BEGIN'), end: fill('END') };
}

export function parseBlockPresent(raw: unknown): BlockPresent {
  const p = readParams(raw, ['path', 'name', 'content', 'marker', 'insertafter', 'insertbefore', 'create']);
  const name = requireString(p, 'name');
  if (name === '' || /[\n\r]/.test(name)) throw new ParamError('param "name" must be one non-empty line');
  const marker = optionalString(p, 'marker') ?? DEFAULT_MARKER;
  if (!marker.includes('{mark}') || /[\n\r]/.test(marker))
    throw new ParamError(
      'param "marker" must be one line holding {mark} (BEGIN or END goes there), e.g. "# {mark} KEEPER {name}"',
    );
  const after = optionalString(p, 'insertafter');
  const before = optionalString(p, 'insertbefore');
  if (after !== undefined && before !== undefined)
    throw new ParamError('params "insertafter" and "insertbefore" exclude each other; keep one');
  return {
    path: targetPath(requireString(p, 'path')),
    name,
    content: splitLines(requireString(p, 'content')).lines,
    ...markers(marker, name),
    ...(after === undefined ? {} : { insertafter: after === 'EOF' ? 'EOF' : compileParam('insertafter', after) }),
    ...(before === undefined ? {} : { insertbefore: before === 'BOF' ? 'BOF' : compileParam('insertbefore', before) }),
    create: optionalBool(p, 'create') ?? false,
  };
}

/** The text with the block as desired, or null when it is. Throws for a half-marked block. */
export function editBlock(p: Omit<BlockPresent, 'path' | 'create'>, text: string): Edit | null {
  const t = splitLines(text);
  const b = t.lines.findIndex((l) => bare(l) === p.begin);
  const e =
    b < 0 ? t.lines.findIndex((l) => bare(l) === p.end) : t.lines.findIndex((l, i) => i > b && bare(l) === p.end);
  // One marker without the other: the block's extent is unknown, so nothing is guessed.
  if (b >= 0 && e < 0)
    throw new Error(
      `line ${b + 1} is "${p.begin}" but no "${p.end}" follows it; add the end marker or remove the begin marker`,
    );
  if (b < 0 && e >= 0)
    throw new Error(
      `line ${e + 1} is "${p.end}" without "${p.begin}" before it; add the begin marker or remove the end marker`,
    );
  if (b >= 0) {
    const inner = t.lines.slice(b + 1, e).map(bare);
    const lines = `lines ${b + 1}-${e + 1}`;
    if (p.content.length === 0) {
      t.lines.splice(b, e - b + 1);
      return { after: joinLines(t), what: `block ${p.name} removed (${lines})` };
    }
    if (inner.length === p.content.length && inner.every((l, i) => l === p.content[i])) return null;
    t.lines.splice(b + 1, e - b - 1, ...p.content);
    return { after: joinLines(t), what: `block ${p.name} replaced (${lines})` };
  }
  if (p.content.length === 0) return null;
  const at = insertIndex(t.lines, {
    ...(p.insertafter === undefined ? {} : { after: p.insertafter }),
    ...(p.insertbefore === undefined ? {} : { before: p.insertbefore }),
  });
  const what = `block ${p.name} inserted ${wherePhrase(at, t.lines.length)}`;
  const block = [p.begin, ...p.content, p.end];
  t.lines.splice(at, 0, ...block);
  if (at + block.length === t.lines.length) t.eol = true;
  return { after: joinLines(t), what };
}

export const createBlockPresent = (_deps: StateDeps): StateModule =>
  defineTextEdit<BlockPresent>({
    name: 'core.block.present',
    parse: parseBlockPresent,
    missing: (p) => (p.content.length === 0 ? 'nothing' : p.create ? 'create' : 'fail'),
    edit: editBlock,
    describe: (p, exists) =>
      p.content.length === 0
        ? `${p.path} ${exists ? 'has no' : 'does not exist, so it has no'} block ${p.name}`
        : `block ${p.name} in ${p.path} is as desired (${p.content.length} line${p.content.length > 1 ? 's' : ''})`,
  });
