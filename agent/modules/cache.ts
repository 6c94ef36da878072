// The soul's cache of module programs shipped with services: `<paths.modules>/<sha256>`, one file per
// program, named by the sha256 of its bytes. A step that uses such a module carries the program
// (docs/state-modules.md, "modules shipped with a service"); before each run the soul checks the
// bytes it received against the step's hash, then the cached file against the same hash, and a
// cached file that no longer matches (edited or replaced on the host) is never run: it is written
// again from the step's copy, and the step's output says so.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface ProgramCopy {
  sha256: string;
  /** The program's bytes, base64, as the step carried them. */
  contentBase64: string;
}

export class ProgramHashError extends Error {
  override readonly name = 'ProgramHashError';
}

const HEX64 = /^[0-9a-f]{64}$/;

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** The cached program's path, verified against its hash; `note` when it had to be written again. */
export function ensureProgram(dir: string, copy: ProgramCopy): { file: string; note?: string } {
  if (!HEX64.test(copy.sha256))
    throw new ProgramHashError(`the step names the program by ${JSON.stringify(copy.sha256)}, not a sha256`);
  const bytes = Buffer.from(copy.contentBase64, 'base64');
  if (sha256(bytes) !== copy.sha256) {
    throw new ProgramHashError(
      `the program received does not match its sha256 ${copy.sha256} (got ${sha256(bytes)}); nothing was run`,
    );
  }
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, copy.sha256);
  let note: string | undefined;
  let cached: Buffer | undefined;
  try {
    cached = fs.readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (cached !== undefined) {
    const st = fs.lstatSync(file);
    if (st.isFile() && sha256(cached) === copy.sha256 && (st.mode & 0o777) === 0o700) return { file };
    note = `the cached program ${file} failed its check (${sha256(cached) === copy.sha256 ? 'its mode changed' : 'its sha256 no longer matches'}): it was not run, and was written again from the keeper's copy`;
  }
  // Written beside, then renamed over: a reader never sees half a program.
  const tmp = path.join(dir, `.${copy.sha256}.${randomBytes(6).toString('hex')}`);
  fs.writeFileSync(tmp, bytes, { mode: 0o700 });
  fs.chmodSync(tmp, 0o700);
  fs.renameSync(tmp, file);
  return note === undefined ? { file } : { file, note };
}
