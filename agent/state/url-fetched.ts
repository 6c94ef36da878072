// core.url.fetched { path, url, checksum, mode?, owner?, group?, timeout? }: the file at `path` holds the
// bytes whose sha256 is `checksum`, downloaded from `url` (http or https) only when the file's own
// checksum differs (Ansible get_url with `checksum`, Salt file.managed with `source_hash`). The download
// goes to a temp file in the same directory (O_EXCL, 0600), is hashed while it is written, and is
// renamed over the target only when its hash is the one asked for: a wrong or truncated download leaves
// nothing behind and the old file as it was. A plan reads the local file only; it never downloads.
import { createHash, randomBytes } from 'node:crypto';
import { constants, createReadStream, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { resolveOwnership } from './accounts';
import { ensureParents } from './atomic-write';
import { formatMode, parseMode } from './file-state';
import { UnsafePathError, assertSafePath, canonicalTarget } from './file-target';
import { ParamError, optionalString, readParams, requireString } from './params';
import { defineState } from './shape';
import type { StateDeps, StateModule } from './types';

const CHECKSUM = /^sha256:([0-9a-f]{64})$/;
const DEFAULT_MODE = 0o644;
const DEFAULT_TIMEOUT_S = 600;

interface FetchParams {
  path: string;
  url: URL;
  sha256: string;
  mode?: number;
  owner?: string;
  group?: string;
  timeoutMs: number;
}
interface Current {
  exists: boolean;
  sha256?: string;
  mode?: number;
  uid?: number;
  gid?: number;
  wantUid?: number;
  wantGid?: number;
}

/** The URL as reports show it: never its user and password, nor its query (tokens live there). */
export function shownUrl(u: URL): string {
  return `${u.protocol}//${u.host}${u.pathname}${u.search ? '?…' : ''}`;
}

async function fsyncDir(dir: string): Promise<void> {
  const fh = await fs.open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** The file's hash, streamed (a download may be large); the file is opened without following a symlink. */
async function readLocal(target: string): Promise<Omit<Current, 'wantUid' | 'wantGid'>> {
  await assertSafePath(target);
  let fh: fs.FileHandle;
  try {
    fh = await fs.open(target, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { exists: false };
    if (code === 'ELOOP')
      throw new UnsafePathError(`${target} is a symlink; refusing to follow a symlink out of place`);
    throw err;
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new UnsafePathError(`${target} exists and is not a regular file`);
    const hash = createHash('sha256');
    for await (const chunk of createReadStream('', { fd: fh.fd, autoClose: false, start: 0 })) hash.update(chunk);
    return { exists: true, sha256: hash.digest('hex'), mode: st.mode & 0o7777, uid: st.uid, gid: st.gid };
  } finally {
    await fh.close();
  }
}

export function createUrlFetched(deps: StateDeps): StateModule {
  return defineState<FetchParams, Current>({
    name: 'core.url.fetched',
    parse(raw) {
      const p = readParams(raw, ['path', 'url', 'checksum', 'mode', 'owner', 'group', 'timeout']);
      const text = requireString(p, 'url');
      let url: URL;
      try {
        url = new URL(text);
      } catch {
        throw new ParamError('param "url" must be an http:// or https:// URL');
      }
      if (url.protocol !== 'https:' && url.protocol !== 'http:')
        throw new ParamError(`param "url" must be an http:// or https:// URL, got a ${url.protocol} URL`);
      const sum = CHECKSUM.exec(requireString(p, 'checksum'));
      if (!sum)
        throw new ParamError(
          'param "checksum" must be "sha256:" and the 64 lowercase hex digits of the file (sha256sum FILE prints them)',
        );
      const mode = optionalString(p, 'mode');
      const owner = optionalString(p, 'owner');
      const group = optionalString(p, 'group');
      const t = p.timeout;
      if (t !== undefined && (typeof t !== 'number' || !Number.isInteger(t) || t < 1 || t > 86400))
        throw new ParamError('param "timeout" must be a whole number of seconds from 1 to 86400');
      return {
        path: canonicalTarget(requireString(p, 'path')),
        url,
        sha256: sum[1]!,
        timeoutMs: ((t as number | undefined) ?? DEFAULT_TIMEOUT_S) * 1000,
        ...(mode === undefined ? {} : { mode: parseMode(mode) }),
        ...(owner === undefined ? {} : { owner }),
        ...(group === undefined ? {} : { group }),
      };
    },
    async read(p, ctx) {
      const current: Current = await readLocal(p.path);
      const ids = await resolveOwnership(p, ctx, deps.accounts);
      if (ids.uid !== undefined) current.wantUid = ids.uid;
      if (ids.gid !== undefined) current.wantGid = ids.gid;
      return current;
    },
    diff(p, cur) {
      const url = shownUrl(p.url);
      if (!cur.exists || cur.sha256 !== p.sha256) {
        const mode = formatMode(p.mode ?? cur.mode ?? DEFAULT_MODE);
        return {
          summary: `${cur.exists ? 'replace' : 'download'} ${p.path} from ${url} (sha256:${p.sha256.slice(0, 12)}…, mode ${mode})`,
          diff: {
            url,
            fetched: true,
            checksum: { ...(cur.exists ? { from: `sha256:${cur.sha256}` } : {}), to: `sha256:${p.sha256}` },
            mode,
          },
        };
      }
      const parts: string[] = [];
      const diff: Record<string, unknown> = { url, fetched: false };
      if (p.mode !== undefined && cur.mode !== p.mode) {
        parts.push(`mode ${formatMode(cur.mode ?? 0)}->${formatMode(p.mode)}`);
        diff.mode = { from: formatMode(cur.mode ?? 0), to: formatMode(p.mode) };
      }
      if (cur.wantUid !== undefined && cur.uid !== cur.wantUid) {
        parts.push(`owner ${cur.uid}->${cur.wantUid}`);
        diff.owner = { from: cur.uid, to: cur.wantUid };
      }
      if (cur.wantGid !== undefined && cur.gid !== cur.wantGid) {
        parts.push(`group ${cur.gid}->${cur.wantGid}`);
        diff.group = { from: cur.gid, to: cur.wantGid };
      }
      if (parts.length === 0) return null;
      return {
        summary: `update ${p.path} (${parts.join(', ')}; content already sha256:${p.sha256.slice(0, 12)}…)`,
        diff,
      };
    },
    describe: (p, cur) =>
      `${p.path} already has sha256:${p.sha256.slice(0, 12)}… (mode ${formatMode(cur.mode ?? 0)}); not downloaded`,
    async apply(p, cur, change) {
      const uid = cur.wantUid ?? cur.uid;
      const gid = cur.wantGid ?? cur.gid;
      const mode = p.mode ?? cur.mode ?? DEFAULT_MODE;
      if (!(change.diff as { fetched: boolean }).fetched) {
        // Same bytes: only the mode or owner differ, set in place.
        if (uid !== undefined || gid !== undefined) await fs.lchown(p.path, uid ?? -1, gid ?? -1);
        await fs.chmod(p.path, mode);
        return change.summary.replace(/^update /, 'updated ');
      }
      await ensureParents(p.path);
      const bytes = await download(p, mode, uid, gid);
      return `${cur.exists ? 'replaced' : 'downloaded'} ${p.path} from ${shownUrl(p.url)} (${bytes} bytes, sha256 verified, mode ${formatMode(mode)})`;
    },
  });
}

/** Downloads into a temp file beside the target, checks the hash, renames it into place; returns the size. */
async function download(p: FetchParams, mode: number, uid?: number, gid?: number): Promise<number> {
  const tmp = path.join(
    path.dirname(p.path),
    `.${path.basename(p.path).slice(0, 100)}.keeper-${randomBytes(8).toString('hex')}.tmp`,
  );
  const fh = await fs.open(tmp, 'wx', 0o600);
  let renamed = false;
  try {
    const res = await fetch(p.url, { redirect: 'follow', signal: AbortSignal.timeout(p.timeoutMs) }).catch(
      (err: Error) => {
        const why = (err.cause as Error | undefined)?.message ?? err.message;
        throw new Error(`param "url": could not download ${shownUrl(p.url)}: ${why}`);
      },
    );
    if (!res.ok || !res.body)
      throw new Error(
        `param "url": ${shownUrl(p.url)} answered HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}; nothing was written`,
      );
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      hash.update(chunk);
      size += chunk.length;
      await fh.write(chunk);
    }
    const got = hash.digest('hex');
    if (got !== p.sha256)
      throw new Error(
        `param "checksum": the ${size} bytes downloaded from ${shownUrl(p.url)} have sha256:${got}, not sha256:${p.sha256}; nothing was written. Correct "checksum" (or "url") to the file you mean`,
      );
    if (uid !== undefined || gid !== undefined) await fh.chown(uid ?? -1, gid ?? -1);
    await fh.chmod(mode); // after chown: chown clears setuid/setgid bits
    await fh.sync();
    await fh.close();
    await fs.rename(tmp, p.path);
    renamed = true;
    await fsyncDir(path.dirname(p.path));
    return size;
  } catch (err) {
    await fh.close().catch(() => undefined);
    if (!renamed) await fs.unlink(tmp).catch(() => undefined);
    throw err;
  }
}
