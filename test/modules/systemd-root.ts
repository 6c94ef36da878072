// A clean Debian 12 root with systemd booted as its PID 1, isolated as a container would be, for the
// state-module tests: the tarball of scripts/systemd-testroot.sh (built once, cached outside the
// repository) unpacked into a fresh folder, then booted by the recipe of ../shared/tools/boot-root.sh
// (this rig keeps its own copy, BOOT below): its own PID, mount, UTS and IPC namespaces, a private
// tmpfs on /dev/shm and a fresh mqueue, pivot_root (never a plain chroot: a unit's RemoveIPC=yes in a
// chroot once removed the machine's PostgreSQL shared memory, and sandboxed units fail there), the
// machine's network. The machine's node and this checkout are bind-mounted read-only at
// /usr/local/bin/node and /opt/keeper, so the soul's own step handler runs inside (in-root.ts); a
// test of the packaged soul boots with `checkout: false` and gets a root with neither.
// Commands enter with nsenter -t <systemd's pid> -m -p -u -i. stop() kills systemd, which ends the
// PID namespace and with the mount namespace every mount made here; then the folder is removed.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { run, script, type Result } from '../packages/debian-root';
import { repoRoot } from '../support/repo';

export type { Result } from '../packages/debian-root';

// $0 root, $1 host name, $2 the checkout, $3 node: mounted before pivot_root, read-only (none when $2
// is empty). $4 and $5: a checkout whose node_modules is a symlink (a git worktree's, to the main
// checkout's) gets the real folder $4 mounted at the link's target $5 inside the root, so the link
// resolves there too.
const BOOT = [
  'set -e; R=$0; H=$1; K=$2; N=$3; M=$4; T=$5',
  'mount --make-rprivate /',
  'mount --bind "$R" "$R"',
  'mount -t proc proc "$R/proc"',
  'mount --rbind /sys "$R/sys"',
  'mount --rbind /dev "$R/dev"',
  // Never the machine's /dev/shm: a unit's RemoveIPC works on this one only.
  'mount -t tmpfs -o mode=1777 tmpfs "$R/dev/shm"',
  'mkdir -p "$R/dev/mqueue"; mount -t mqueue mqueue "$R/dev/mqueue" || true',
  'if [ -n "$K" ]; then mount --bind "$K" "$R/opt/keeper"; mount -o remount,ro,bind "$R/opt/keeper"; fi',
  'if [ -n "$N" ]; then mount --bind "$N" "$R/usr/local/bin/node"; mount -o remount,ro,bind "$R/usr/local/bin/node"; fi',
  'if [ -n "$T" ]; then mount --bind "$M" "$R$T"; mount -o remount,ro,bind "$R$T"; fi',
  'hostname "$H"',
  'mkdir -p "$R/.oldroot"; cd "$R"; pivot_root . .oldroot',
  'umount -l /.oldroot',
  'exec /lib/systemd/systemd --system',
].join('\n');

const PATH = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

const children = (pid: number): number[] => {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
};

const live = new Set<SystemdRoot>();
// A test process that dies without its after() hooks still takes its roots' systemd down.
process.once('exit', () => {
  for (const r of live) r.killNow();
});

export class SystemdRoot {
  private constructor(
    readonly dir: string,
    readonly pid: number,
    private readonly boot: ChildProcess,
  ) {}

  /** Unpacks the cached root (building it first if this machine has none) and boots systemd in it.
   *  `prepare` edits the unpacked folder before systemd starts (what starts at boot, say);
   *  `checkout: false` mounts neither this checkout nor the machine's node (a root as clean as a host). */
  static async boot(
    hostname = 'modules-root',
    prepare?: (dir: string) => void,
    opts: { checkout?: boolean } = {},
  ): Promise<SystemdRoot> {
    const checkout = opts.checkout !== false;
    const tarball = (await script('systemd-testroot.sh')).trim();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'systemd-root-'));
    fs.chmodSync(dir, 0o755);
    const r = await run('tar', ['-xf', tarball, '-C', dir, '--numeric-owner']);
    if (r.code !== 0) throw new Error(`unpacking ${tarball}: ${r.stderr}`);
    fs.writeFileSync(
      path.join(dir, 'etc', 'hosts'),
      '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n',
    );
    if (checkout) {
      fs.mkdirSync(path.join(dir, 'opt', 'keeper'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'usr', 'local', 'bin', 'node'), '');
    }
    // No getty or network configuration to wait for in a container.
    // (a serial getty waits 90 s for the machine's console device, which a container never gets).
    for (const unit of ['getty@.service', 'serial-getty@.service', 'console-getty.service']) {
      fs.symlinkSync('/dev/null', path.join(dir, 'etc', 'systemd', 'system', unit));
    }
    prepare?.(dir);
    const modules = path.join(repoRoot(), 'node_modules');
    const link = fs.lstatSync(modules, { throwIfNoEntry: false })?.isSymbolicLink() ? fs.readlinkSync(modules) : '';
    const linkTarget = checkout && path.isAbsolute(link) ? link : '';
    if (linkTarget) fs.mkdirSync(path.join(dir, linkTarget), { recursive: true });
    const boot = spawn(
      'unshare',
      [
        '--pid',
        '--fork',
        '--mount',
        '--uts',
        '--ipc',
        'bash',
        '-c',
        BOOT,
        dir,
        hostname,
        checkout ? fs.realpathSync(repoRoot()) : '',
        checkout ? fs.realpathSync(process.execPath) : '',
        linkTarget ? fs.realpathSync(modules) : '',
        linkTarget,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    boot.stderr!.on('data', (d) => {
      err += d;
    });
    let pid: number | undefined;
    for (let i = 0; i < 200 && pid === undefined; i++) {
      await new Promise((res) => setTimeout(res, 50));
      if (boot.exitCode !== null) break;
      const [child] = children(boot.pid!);
      if (child !== undefined && fs.readlinkSync(`/proc/${child}/exe`).endsWith('/systemd')) pid = child;
    }
    if (pid === undefined) {
      boot.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
      throw new Error(`systemd did not start in ${dir}: ${err.slice(-2000)}`);
    }
    const root = new SystemdRoot(dir, pid, boot);
    live.add(root);
    // `is-system-running --wait` answers once boot is done: "running", or "degraded" if a unit failed.
    // Its bus socket appears a moment after systemd starts: asked again until it answers.
    let state: Result = { code: 1, stdout: '', stderr: '' };
    for (let i = 0; i < 100 && !/^(running|degraded)/.test(state.stdout); i++) {
      if (i > 0) await new Promise((res) => setTimeout(res, 200));
      state = await root.run(['systemctl', 'is-system-running', '--wait'], { timeoutMs: 120_000 });
    }
    if (!/^(running|degraded)/.test(state.stdout)) {
      await root.stop();
      throw new Error(`systemd did not finish booting: ${state.stdout}${state.stderr}`);
    }
    return root;
  }

  /** The machine's path of a path inside the root. */
  path(p: string): string {
    return path.join(this.dir, p);
  }

  /** Runs a command inside the root's namespaces, with an environment as empty as a unit's. */
  run(cmd: string[], opts: { input?: string; timeoutMs?: number } = {}): Promise<Result> {
    return run(
      'nsenter',
      [
        '-t',
        String(this.pid),
        '-m',
        '-p',
        '-u',
        '-i',
        '--',
        '/usr/bin/env',
        '-i',
        PATH,
        'HOME=/root',
        'LANG=C.UTF-8',
        ...cmd,
      ],
      opts,
    );
  }

  /** Like run, but throws (with the output) unless the command exits 0. */
  async ok(cmd: string[], opts: { input?: string; timeoutMs?: number } = {}): Promise<string> {
    const r = await this.run(cmd, opts);
    if (r.code !== 0)
      throw new Error(
        `${cmd.join(' ')} exited ${r.code} in the systemd root:\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-3000)}`,
      );
    return r.stdout;
  }

  /** A service's main PID and its children's (nginx: the master and its workers). */
  async pids(unit: string): Promise<{ main: number; others: number[] }> {
    const main = Number((await this.ok(['systemctl', 'show', '--property=MainPID', '--value', unit])).trim());
    const r = main > 0 ? await this.run(['ps', '--ppid', String(main), '-o', 'pid=']) : { stdout: '' };
    return {
      main,
      others: r.stdout
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map(Number)
        .sort((a, b) => a - b),
    };
  }

  killNow(): void {
    try {
      process.kill(this.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
    live.delete(this);
  }

  /** Kills systemd (and with it every process and mount of the root), then removes the folder. */
  async stop(): Promise<void> {
    this.killNow();
    if (this.boot.exitCode === null && this.boot.signalCode === null) {
      await new Promise<void>((res) => {
        this.boot.once('close', () => res());
        setTimeout(res, 10_000);
      });
    }
    fs.rmSync(this.dir, { recursive: true, force: true, maxRetries: 3 });
  }
}
