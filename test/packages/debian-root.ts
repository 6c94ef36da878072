// A clean Debian 12 root for installing the built packages without touching this machine: the
// mmdebstrap tarball of scripts/package-testroot.sh unpacked into a fresh folder, entered with
// unshare (its own mount, UTS and PID namespaces: /dev and /proc mounted there vanish with it, the
// host name is its own) and chroot, with an environment as empty as systemd gives a service.
// The network namespace is the machine's, so the programs inside reach the stack on 127.0.0.1.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../support/repo';

export interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program (no shell) and collects its output; never throws. */
export function run(
  cmd: string,
  args: string[],
  opts: { input?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<Result> {
  return new Promise((resolve) => {
    const child = execFile(
      cmd,
      args,
      { maxBuffer: 64 * 1024 * 1024, timeout: opts.timeoutMs ?? 300_000, env: { ...process.env, ...opts.env } },
      (err, stdout, stderr) => {
        const code = err
          ? typeof (err as NodeJS.ErrnoException).code === 'number'
            ? (err as unknown as { code: number }).code
            : (child.exitCode ?? 1)
          : 0;
        resolve({ code, stdout, stderr });
      },
    );
    if (opts.input !== undefined) child.stdin!.end(opts.input);
    else child.stdin!.end();
  });
}

/** Runs a repository script and returns its stdout, or throws with its stderr. */
export async function script(name: string, args: string[] = [], timeoutMs = 900_000): Promise<string> {
  const r = await run(path.join(repoRoot(), 'scripts', name), args, { timeoutMs });
  if (r.code !== 0) throw new Error(`scripts/${name} ${args.join(' ')} exited ${r.code}:\n${r.stderr.slice(-3000)}`);
  return r.stdout;
}

// $0 is the root, $1 the host name; "$@" the command, run by env -i so no value is parsed by a shell.
const ENTER = [
  'set -e',
  'R="$0"; H="$1"; shift',
  'mount --rbind /dev "$R/dev"; mount --make-rslave "$R/dev"',
  'mount -t proc proc "$R/proc"',
  'hostname "$H"',
  'exec chroot "$R" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"',
].join('\n');

export class DebianRoot {
  private constructor(readonly dir: string) {}

  /** Unpacks the cached clean root (building it first if this machine has none). */
  static async create(): Promise<DebianRoot> {
    const tarball = (await script('package-testroot.sh')).trim();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'debian-root-'));
    fs.chmodSync(dir, 0o755);
    const r = await run('tar', ['-xf', tarball, '-C', dir, '--numeric-owner']);
    if (r.code !== 0) throw new Error(`unpacking ${tarball}: ${r.stderr}`);
    // What the Debian installer writes and a debootstrapped root lacks: localhost resolves.
    fs.writeFileSync(
      path.join(dir, 'etc', 'hosts'),
      '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n',
    );
    return new DebianRoot(dir);
  }

  /** The machine's path of a path inside the root. */
  path(p: string): string {
    return path.join(this.dir, p);
  }

  private args(hostname: string, cmd: string[]): string[] {
    return [
      '--mount',
      '--uts',
      '--pid',
      '--fork',
      '--kill-child=SIGTERM',
      'sh',
      '-c',
      ENTER,
      this.dir,
      hostname,
      ...cmd,
    ];
  }

  /** Runs a command inside the root and waits for it. */
  run(cmd: string[], opts: { hostname?: string; input?: string; timeoutMs?: number } = {}): Promise<Result> {
    return run('unshare', this.args(opts.hostname ?? 'debian-root', cmd), opts);
  }

  /** Like run, but throws (with the output) unless the command exits 0. */
  async ok(cmd: string[], opts: { hostname?: string; input?: string; timeoutMs?: number } = {}): Promise<string> {
    const r = await this.run(cmd, opts);
    if (r.code !== 0)
      throw new Error(
        `${cmd.join(' ')} exited ${r.code} in the Debian root:\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-3000)}`,
      );
    return r.stdout;
  }

  /** Starts a long-running command inside the root; SIGTERM to the child reaches the command. */
  spawn(cmd: string[], hostname: string): ChildProcess {
    return spawn('unshare', this.args(hostname, cmd), { stdio: ['ignore', 'pipe', 'pipe'] });
  }

  /** Copies a machine file into the root. */
  put(from: string, to: string, mode = 0o644): void {
    fs.mkdirSync(path.dirname(this.path(to)), { recursive: true });
    fs.copyFileSync(from, this.path(to));
    fs.chmodSync(this.path(to), mode);
  }

  async destroy(): Promise<void> {
    fs.rmSync(this.dir, { recursive: true, force: true, maxRetries: 3 });
  }
}

/** A process inside the root with its output collected, stopped like systemd stops a unit (SIGTERM). */
export class RootProcess {
  readonly log = { out: '' };
  readonly done: Promise<number | null>;
  constructor(readonly child: ChildProcess) {
    child.stdout!.on('data', (d) => {
      this.log.out += d;
    });
    child.stderr!.on('data', (d) => {
      this.log.out += d;
    });
    this.done = new Promise((resolve) => child.on('close', (code) => resolve(code)));
  }

  /**
   * SIGTERM to the command itself, as systemd's KillSignal: unshare does not forward signals, but it
   * exits with its child's status, so the command's own exit code comes back.
   */
  async stop(): Promise<number | null> {
    const pid = this.child.pid;
    if (this.child.exitCode === null && this.child.signalCode === null && pid !== undefined) {
      let inner: number[] = [];
      try {
        inner = fs
          .readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
          .trim()
          .split(/\s+/)
          .filter(Boolean)
          .map(Number);
      } catch {
        /* already gone */
      }
      if (inner.length > 0) for (const p of inner) process.kill(p, 'SIGTERM');
      else this.child.kill('SIGTERM');
    }
    const t = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
    try {
      return await this.done;
    } finally {
      clearTimeout(t);
    }
  }
}
