// The implementation behind core.file.present and core.file.rendered: both end in "this file has
// exactly these bytes and this mode"; they differ only in where the content came from (a literal
// or a template rendered on the keeper). Content is compared as bytes, mode as permission bits.
// `validate: [argv...]` runs a command on the candidate file (its path in place of `%s`, no shell)
// before it replaces the live file; a non-zero exit fails the step and leaves the live file as it was.
import { createHash } from 'node:crypto';
import { resolveOwnership } from './accounts';
import { decideAtApply, pendingInstall } from './pending';
import { ensureParents, writeAtomic } from './atomic-write';
import { contentDigest, identityAt } from './content-identity';
import { canonicalTarget, readTarget, type FileSnapshot } from './file-target';
import { ParamError, optionalString, readParams, requireString } from './params';
import { defineState, type Change } from './shape';
import type { FileIdentity, StateDeps, StateModule } from './types';
import { MAX_DIFF_INPUT, isText, unifiedDiff } from './unified-diff';

const MODE_TEXT = /^0?[0-7]{3,4}$/;
/** Mode of a file we create when the step gives none; an existing file keeps its mode. */
export const DEFAULT_FILE_MODE = 0o644;

export function parseMode(text: string): number {
  if (!MODE_TEXT.test(text))
    throw new ParamError(`param "mode" must be octal text like "0644", got ${JSON.stringify(text)}`);
  return parseInt(text, 8);
}

export function formatMode(mode: number): string {
  return mode.toString(8).padStart(4, '0');
}

interface FileParams {
  path: string;
  content: Buffer;
  mode?: number;
  owner?: string;
  group?: string;
  validate?: string[];
}

/** The placeholder in a `validate` argv that stands for the candidate file's path. */
export const VALIDATE_PLACEHOLDER = '%s';

function parseValidate(v: unknown): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.length === 0 || !v.every((a) => typeof a === 'string') || (v[0] as string).length === 0) {
    throw new ParamError(
      'param "validate" must be a non-empty list of strings (argv: the command, then its arguments)',
    );
  }
  if (!v.some((a: string) => a.includes(VALIDATE_PLACEHOLDER))) {
    throw new ParamError(
      `param "validate" must name the candidate file with ${VALIDATE_PLACEHOLDER} in one of its arguments`,
    );
  }
  return v as string[];
}

interface Current {
  file: FileSnapshot;
  wantUid?: number;
  wantGid?: number;
}

// The diff carries hashes and sizes: rendered files routinely hold secrets, and the result travels
// to the keeper and into the run report. Content appears only as a unified diff in a plan, for a
// step the keeper marked as holding no secret (docs/plans.md "What a plan shows").
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function contentDiff(path: string, before: Buffer, after: Buffer): { unified?: string; unified_withheld?: string } {
  if (before.length > MAX_DIFF_INPUT || after.length > MAX_DIFF_INPUT)
    return { unified_withheld: `larger than ${MAX_DIFF_INPUT} bytes` };
  if (!isText(before) || !isText(after)) return { unified_withheld: 'not text' };
  return { unified: unifiedDiff(before.toString('utf8'), after.toString('utf8'), path) };
}

export function createFileState(name: string, deps: StateDeps): StateModule {
  return defineState<FileParams, Current>({
    name,
    parse(raw) {
      const p = readParams(raw, ['path', 'content', 'mode', 'owner', 'group', 'validate']);
      const mode = optionalString(p, 'mode');
      const owner = optionalString(p, 'owner');
      const group = optionalString(p, 'group');
      const validate = parseValidate(p.validate);
      return {
        ...(validate === undefined ? {} : { validate }),
        path: canonicalTarget(requireString(p, 'path')),
        content: Buffer.from(requireString(p, 'content'), 'utf8'),
        ...(mode === undefined ? {} : { mode: parseMode(mode) }),
        ...(owner === undefined ? {} : { owner }),
        ...(group === undefined ? {} : { group }),
      };
    },
    async read(p, ctx) {
      const file = await readTarget(p.path);
      const current: Current = { file };
      // A file a package would ship (postgresql.conf by postgresql-15) is not there before it is
      // installed: the plan shows it created, and says what it replaces is seen only at apply.
      const pkg = file.exists ? undefined : pendingInstall(ctx);
      if (pkg)
        decideAtApply(
          ctx,
          `the content ${p.path} replaces, if shipped by ${pkg.names.join(', ') || 'a package'} (step ${pkg.index} installs it)`,
        );
      const ids = await resolveOwnership(p, ctx, deps.accounts);
      if (ids.uid !== undefined) current.wantUid = ids.uid;
      if (ids.gid !== undefined) current.wantGid = ids.gid;
      return current;
    },
    diff(p, { file, wantUid, wantGid }, ctx): Change | null {
      const after = { sha256: sha256(p.content), size: p.content.length };
      // Content only when the keeper allows it (no secret in the step) and in a dry run (a plan).
      const unified = (before: Buffer) =>
        ctx.dryRun && ctx.showContent === true ? contentDiff(p.path, before, p.content) : {};
      if (!file.exists || !file.content) {
        const mode = formatMode(p.mode ?? DEFAULT_FILE_MODE);
        return {
          summary: `create ${p.path} (mode ${mode})`,
          diff: { created: true, mode, content: { after, ...unified(Buffer.alloc(0)) } },
        };
      }
      const parts: string[] = [];
      const diff: Record<string, unknown> = {};
      if (!file.content.equals(p.content)) {
        parts.push('content updated');
        diff.content = {
          before: { sha256: sha256(file.content), size: file.content.length },
          after,
          ...unified(file.content),
        };
      }
      if (p.mode !== undefined && file.mode !== p.mode) {
        parts.push(`mode ${formatMode(file.mode ?? 0)}->${formatMode(p.mode)}`);
        diff.mode = { from: formatMode(file.mode ?? 0), to: formatMode(p.mode) };
      }
      if (wantUid !== undefined && file.uid !== wantUid) {
        parts.push(`owner ${file.uid}->${wantUid}`);
        diff.owner = { from: file.uid, to: wantUid };
      }
      if (wantGid !== undefined && file.gid !== wantGid) {
        parts.push(`group ${file.gid}->${wantGid}`);
        diff.group = { from: file.gid, to: wantGid };
      }
      if (parts.length === 0) return null;
      return { summary: `update ${p.path} (${parts.join(', ')})`, diff };
    },
    describe: (p, { file }) =>
      `${p.path} is already as desired (mode ${formatMode(file.mode ?? 0)}, ${file.content?.length ?? 0} bytes)`,
    async apply(p, { file, wantUid, wantGid }, change) {
      await ensureParents(p.path);
      // A rewrite keeps what the step does not mention: the existing mode and ownership.
      const uid = wantUid ?? file.uid;
      const gid = wantGid ?? file.gid;
      await writeAtomic({
        path: p.path,
        content: p.content,
        mode: p.mode ?? file.mode ?? DEFAULT_FILE_MODE,
        ...(uid === undefined ? {} : { uid }),
        ...(gid === undefined ? {} : { gid }),
        ...(p.validate === undefined
          ? {}
          : { validate: (candidate: string) => runValidator(deps, p.validate!, candidate) }),
      });
      return file.exists
        ? change.summary.replace(/^update /, 'updated ')
        : change.summary.replace(/^create /, 'created ');
    },
    // The content before the step (a plan over a copy of a secret file reads the secret), and the
    // file written (a new inode: writeAtomic renames a fresh file into place).
    async files(p, { file }, applied) {
      const key = deps.contentKey;
      if (!key) return [];
      const out: FileIdentity[] = [];
      if (file.exists && file.content && file.fileId)
        out.push({ path: p.path, role: 'read', digest: contentDigest(key, file.content), file_id: file.fileId });
      const written = applied ? await identityAt(key, p.path, 'written', p.content) : null;
      if (written) out.push(written);
      return out;
    },
  });
}

async function runValidator(deps: StateDeps, argv: string[], candidate: string): Promise<void> {
  const [file, ...args] = argv.map((a) => a.split(VALIDATE_PLACEHOLDER).join(candidate));
  const r = await deps.runner({ file: file!, args, timeoutMs: 60_000 });
  if (r.code !== 0) {
    const why = (r.stderr.trim() || r.stdout.trim())
      .split('\n')
      .slice(-5)
      .join('\n')
      .split(candidate)
      .join('<candidate>');
    throw new Error(
      `validate: ${argv[0]} refused the new content (exit ${r.code}); the live file is unchanged${why ? `: ${why}` : ''}`,
    );
  }
}
