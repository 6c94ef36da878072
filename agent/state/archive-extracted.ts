// core.archive.extracted { src, dest, creates?, strip_components? }: the archive at `src` (on the host) is
// unpacked into `dest` (Ansible unarchive with remote_src, Salt archive.extracted). It is unpacked again
// only when `creates` does not exist or, without `creates`, when the archive's sha256 differs from the
// one the last extraction recorded in `dest` (a marker file, `.keeper-extracted.<archive name>`).
// The system's `tar` (and `unzip` for a zip) do the work, run as argv through the command runner, never
// a shell. Every entry is listed first (in a plan too) and an archive with an absolute path or a `..`
// entry is refused before anything is written, so an archive cannot write outside `dest`.
import { createHash } from 'node:crypto';
import { constants, createReadStream, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ensureParents } from './atomic-write';
import { canonicalTarget } from './file-target';
import { ParamError, readParams, requireString, optionalString } from './params';
import { defineState } from './shape';
import type { StateDeps, StateModule } from './types';
import { tail } from '../exec/runner';

type Format = 'tar' | 'zip';

interface ArchiveParams {
  src: string;
  dest: string;
  creates?: string;
  strip?: number;
  format: Format;
}
interface Current {
  srcSha256: string;
  entries: number;
  destExists: boolean;
  /** Why it must be unpacked; undefined when it need not. */
  because?: string;
  /** The marker (no `creates`) and its recorded hash. */
  marker?: string;
  recorded?: string;
}

const TIMEOUT_MS = 30 * 60_000;

/** The marker an extraction without `creates` leaves in `dest`: the archive's sha256. */
export const markerFor = (p: { src: string; dest: string }) =>
  path.join(p.dest, `.keeper-extracted.${path.basename(p.src).slice(0, 200)}`);

function formatOf(src: string): Format {
  return /\.zip$/i.test(src) ? 'zip' : 'tar';
}

const exists = (p: string) =>
  fs.lstat(p).then(
    () => true,
    (e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? false : Promise.reject(e)),
  );

async function sha256Of(file: string): Promise<string> {
  const fh = await fs.open(file, constants.O_RDONLY);
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new ParamError(`param "src": ${file} is not a regular file`);
    const hash = createHash('sha256');
    for await (const chunk of createReadStream('', { fd: fh.fd, autoClose: false, start: 0 })) hash.update(chunk);
    return hash.digest('hex');
  } finally {
    await fh.close();
  }
}

/** Is `tool` on the soul's PATH? (A plan must say a zip cannot be unpacked without running anything.) */
async function onPath(tool: string): Promise<boolean> {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(':').filter(Boolean)) {
    if (
      await fs.access(path.join(dir, tool), constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return true;
  }
  return false;
}

/** An entry that would land outside `dest`: absolute, or climbing with `..`. */
const escapes = (entry: string) => entry.startsWith('/') || entry.split('/').includes('..');

export function createArchiveExtracted(deps: StateDeps): StateModule {
  const list = async (p: ArchiveParams): Promise<string[]> => {
    const r =
      p.format === 'zip'
        ? await deps.runner({ file: 'unzip', args: ['-Z1', '--', p.src], timeoutMs: TIMEOUT_MS })
        : await deps.runner({ file: 'tar', args: ['-t', '-f', p.src], timeoutMs: TIMEOUT_MS });
    if (r.code !== 0)
      throw new Error(
        `param "src": ${p.src} could not be read as a ${p.format} archive (${p.format === 'zip' ? 'unzip -Z1' : 'tar -t'} exit ${r.code}): ${tail(r.stderr || r.stdout)}`,
      );
    return r.stdout.split('\n').filter((l) => l.length > 0);
  };

  return defineState<ArchiveParams, Current>({
    name: 'core.archive.extracted',
    parse(raw) {
      const p = readParams(raw, ['src', 'dest', 'creates', 'strip_components']);
      const src = canonicalTarget(requireString(p, 'src'));
      const dest = canonicalTarget(requireString(p, 'dest'));
      const creates = optionalString(p, 'creates');
      const strip = p.strip_components;
      if (strip !== undefined && (typeof strip !== 'number' || !Number.isInteger(strip) || strip < 0 || strip > 32))
        throw new ParamError('param "strip_components" must be a whole number from 0 to 32');
      const format = formatOf(src);
      if (format === 'zip' && strip !== undefined && strip > 0)
        throw new ParamError(
          'param "strip_components" works for tar archives only; unzip cannot strip leading folders',
        );
      if (dest === '/') throw new ParamError('param "dest" must not be /; name the folder to unpack into');
      return {
        src,
        dest,
        format,
        ...(creates === undefined ? {} : { creates: canonicalTarget(creates) }),
        ...(typeof strip === 'number' && strip > 0 ? { strip } : {}),
      };
    },
    async read(p, ctx) {
      // In a plan, an earlier step of the same plan that would write the archive (core.url.fetched of a
      // new release) has written nothing yet: the apply will find a new archive, so the plan says so.
      const rewritten =
        ctx.dryRun && (ctx.earlier ?? []).some((e) => e.changed && e.paths.some((x) => canonicalTarget(x) === p.src));
      if (rewritten) {
        const destExists = await exists(p.dest);
        const because = `an earlier step of this run writes ${p.src}`;
        if (p.creates === undefined || !(await exists(p.creates)))
          return { srcSha256: '', entries: -1, destExists, because };
      }
      if (!(await exists(p.src)))
        throw new ParamError(`param "src": ${p.src} does not exist on this host; fetch it first (core.url.fetched)`);
      if (p.format === 'zip' && !(await onPath('unzip')))
        throw new ParamError(
          `param "src": ${p.src} is a zip archive and unzip is not installed on this host; add a core.pkg.installed step for unzip before this one, or use a tar archive`,
        );
      const srcSha256 = await sha256Of(p.src);
      const entries = await list(p);
      const bad = entries.find(escapes);
      if (bad !== undefined)
        throw new Error(
          `param "src": ${p.src} holds the entry ${JSON.stringify(bad)}, which would land outside dest; refusing to unpack it`,
        );
      const destExists = await exists(p.dest);
      const cur: Current = { srcSha256, entries: entries.length, destExists };
      if (p.creates !== undefined) {
        if (!(await exists(p.creates))) cur.because = `creates: ${p.creates} does not exist`;
        return cur;
      }
      const marker = markerFor(p);
      cur.marker = marker;
      const recorded = (await fs.readFile(marker, 'utf8').catch(() => '')).trim();
      if (recorded) cur.recorded = recorded;
      if (recorded !== srcSha256)
        cur.because = recorded
          ? `the archive changed since it was last unpacked (sha256 ${recorded.slice(0, 12)}… -> ${srcSha256.slice(0, 12)}…)`
          : `not unpacked here before (no ${path.basename(marker)} in ${p.dest})`;
      return cur;
    },
    diff(p, cur) {
      if (cur.because === undefined) return null;
      return {
        summary: `extract ${p.src}${cur.entries < 0 ? '' : ` (${cur.entries} entries)`} into ${p.dest}${cur.destExists ? '' : ' (a new folder)'} (${cur.because})`,
        diff: {
          src: p.src,
          dest: p.dest,
          ...(cur.entries < 0 ? {} : { entries: cur.entries, sha256: cur.srcSha256 }),
          because: cur.because,
          ...(cur.destExists ? {} : { dest_created: true }),
        },
      };
    },
    describe: (p, cur) =>
      p.creates !== undefined
        ? `${p.src} is already unpacked into ${p.dest} (creates: ${p.creates} exists)`
        : `${p.src} is already unpacked into ${p.dest} (sha256 ${cur.srcSha256.slice(0, 12)}… as recorded)`,
    async apply(p, cur, change) {
      if (!cur.destExists) {
        await ensureParents(path.join(p.dest, 'x'));
      }
      const r =
        p.format === 'zip'
          ? await deps.runner({ file: 'unzip', args: ['-q', '-o', '--', p.src, '-d', p.dest], timeoutMs: TIMEOUT_MS })
          : await deps.runner({
              file: 'tar',
              args: ['-x', '-f', p.src, '-C', p.dest, ...(p.strip ? [`--strip-components=${p.strip}`] : [])],
              timeoutMs: TIMEOUT_MS,
            });
      if (r.code !== 0)
        throw new Error(
          `${p.format === 'zip' ? 'unzip' : 'tar'} exited ${r.code} unpacking ${p.src} into ${p.dest} (some files may be written): ${tail(r.stderr || r.stdout)}`,
        );
      if (p.creates !== undefined && !(await exists(p.creates)))
        throw new Error(
          `param "creates": ${p.src} was unpacked into ${p.dest} but ${p.creates} still does not exist, so every run would unpack it again; name a path the archive makes`,
        );
      if (cur.marker !== undefined) await fs.writeFile(cur.marker, `${cur.srcSha256}\n`, { mode: 0o644 });
      return change.summary.replace(/^extract /, 'extracted ');
    },
  });
}
