// What identifies a file's content without revealing it (docs/secrets.md "Copies and links"). The
// keeper taints a file a secret was written to; a copy (`cp`, an application's `.bak`) or a hard
// link of it has another path, so the file modules report, for each file they read or write, a
// keyed digest of its bytes (a copy has the same) and its inode (a hard link has the same), and the
// keeper compares them with what it recorded for the secret's write.
// The digest is an HMAC-SHA256 under a random key this soul makes once and keeps beside its
// identity (<paths.seed>/content-key, 0600): the keeper and a viewer of its database can compare
// digests, but no one without the key can test a guessed password against one offline.
import { createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { FileIdentity } from './types';

export const CONTENT_KEY_FILE = 'content-key';
const KEY_BYTES = 32;

/**
 * This soul's content key, made at the first call (exclusive create, so two processes agree on one
 * key). A key file of the wrong length is refused rather than replaced: a new key would make every
 * digest the keeper recorded for this host unrecognisable.
 */
export function loadContentKey(seedDir: string): Buffer {
  const file = path.join(seedDir, CONTENT_KEY_FILE);
  try {
    fs.writeFileSync(file, randomBytes(KEY_BYTES), { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const key = fs.readFileSync(file);
  if (key.length !== KEY_BYTES)
    throw new Error(`${file} holds ${key.length} bytes, not ${KEY_BYTES}; remove it and the soul makes a new one`);
  return key;
}

/** The keyed digest of a content (hex). */
export function contentDigest(key: Buffer, content: Buffer): string {
  return createHmac('sha256', key).update(content).digest('hex');
}

/** The inode's identity from a bigint stat: device, inode and birth time (a reused inode number differs in it). */
export function fileIdOf(st: { dev: bigint; ino: bigint; birthtimeNs: bigint }): string {
  return `${st.dev}:${st.ino}:${st.birthtimeNs}`;
}

/** The identity of a file now at `target` (not following a symlink), holding `content`; null when absent. */
export async function identityAt(
  key: Buffer,
  target: string,
  role: FileIdentity['role'],
  content: Buffer,
): Promise<FileIdentity | null> {
  try {
    const st = await fs.promises.lstat(target, { bigint: true });
    if (!st.isFile()) return null;
    return { path: target, role, digest: contentDigest(key, content), file_id: fileIdOf(st) };
  } catch {
    return null;
  }
}
