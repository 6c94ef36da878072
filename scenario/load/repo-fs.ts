/**
 * Read-only access to a service repository that cannot leave it. Every path
 * is resolved with realpath and must stay under the repository's own
 * realpath, so neither `templates/../../etc/passwd` nor a symlink to
 * /etc/passwd is ever opened. File and repository sizes are capped before a
 * byte is read.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ScenarioError } from '../errors';
import { LIMITS } from '../limits';

export const RULE_REPO = 'SL002';

export class RepoFs {
  readonly root: string;
  private bytes = 0;
  private files = 0;

  constructor(root: string) {
    this.root = fs.realpathSync(root);
  }

  /** Repository-relative path (forward slashes) to a real path inside the root, or an error. */
  resolve(rel: string): string {
    const norm = path.posix.normalize(rel.replace(/\\/g, '/'));
    if (path.posix.isAbsolute(norm) || norm === '..' || norm.startsWith('../') || rel.includes('\0')) {
      throw this.error(
        rel,
        `path "${rel}" points outside the repository`,
        'use a path inside the repository, without ".." or a leading "/"',
      );
    }
    const abs = path.join(this.root, norm);
    let real: string;
    try {
      real = fs.realpathSync(abs);
    } catch {
      return abs; // does not exist; callers check existence
    }
    if (real !== this.root && !real.startsWith(this.root + path.sep)) {
      throw this.error(
        rel,
        `"${rel}" resolves outside the repository (symlink)`,
        'replace the symlink with a regular file',
      );
    }
    return real;
  }

  exists(rel: string): boolean {
    return fs.existsSync(this.resolve(rel));
  }

  readText(rel: string): string {
    const buf = this.read(rel).buf;
    const text = buf.toString('utf8');
    if (text.includes('\uFFFD') && !buf.includes(Buffer.from('\uFFFD'))) {
      throw this.error(rel, `"${rel}" is not valid UTF-8`, 'save the file as UTF-8');
    }
    return text;
  }

  /** A file's bytes and its permission bits (a module program must be executable), with the same caps. */
  readBytes(rel: string, maxBytes: number = LIMITS.maxFileBytes): { buf: Buffer; mode: number } {
    return this.read(rel, maxBytes);
  }

  private read(rel: string, maxBytes: number = LIMITS.maxFileBytes): { buf: Buffer; mode: number } {
    const real = this.resolve(rel);
    const st = fs.statSync(real);
    if (!st.isFile()) throw this.error(rel, `"${rel}" is not a regular file`, 'make it a file');
    if (st.size > maxBytes) {
      throw this.error(
        rel,
        `"${rel}" is ${st.size} bytes, over the ${maxBytes}-byte limit per file`,
        'make the file smaller',
      );
    }
    this.bytes += st.size;
    if (this.bytes > LIMITS.maxRepoBytes) {
      throw this.error(
        rel,
        `the repository's files exceed ${LIMITS.maxRepoBytes} bytes in total`,
        'remove large files from the service',
      );
    }
    if (++this.files > LIMITS.maxFiles)
      throw this.error(rel, `more than ${LIMITS.maxFiles} files`, 'remove unused files');
    return { buf: fs.readFileSync(real), mode: st.mode };
  }

  /** Files under `relDir` (recursively) whose names end with `suffix`, sorted, repository-relative. */
  list(relDir: string, suffix: string): string[] {
    const out: string[] = [];
    const walk = (rel: string, depth: number): void => {
      if (depth > 16)
        throw this.error(rel, `directories nested deeper than 16 levels under ${relDir}`, 'flatten the directory tree');
      const real = this.resolve(rel);
      if (!fs.existsSync(real) || !fs.statSync(real).isDirectory()) return;
      for (const ent of fs.readdirSync(real, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
        const child = `${rel}/${ent.name}`;
        if (out.length > LIMITS.maxFiles)
          throw this.error(child, `more than ${LIMITS.maxFiles} files under ${relDir}`, 'remove unused files');
        const st = fs.statSync(this.resolve(child));
        if (st.isDirectory()) walk(child, depth + 1);
        else if (ent.name.endsWith(suffix)) out.push(child);
      }
    };
    walk(relDir, 0);
    return out;
  }

  private error(rel: string, message: string, fix: string): ScenarioError {
    return new ScenarioError({ file: rel, line: 1, col: 1 }, RULE_REPO, message, fix);
  }
}
