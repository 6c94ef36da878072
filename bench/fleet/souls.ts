// Real souls for the fleet benchmark: `bin/soul init` and `bin/soul run` processes, each in its own
// UTS namespace whose host name is its SID (as test/agents/harness.ts and scripts/demo-story.sh start
// them), each also in its own process group (detached) so that stopping one stops whatever it
// started too, and so that a benchmark that fails or is interrupted can kill them all by group.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { SOUL_BIN, writeSoulConfig, type EndpointSpec } from '../../test/agents/harness';
import { repoRoot } from '../../test/support/repo';

/** packaging/soul/node-flags: what /usr/bin/soul passes to node (scripts/package.sh). */
const SOUL_NODE_FLAGS = fs
  .readFileSync(path.join(repoRoot(), 'packaging', 'soul', 'node-flags'), 'utf8')
  .trim()
  .split(/\s+/);

/** How much of a soul's output is kept: enough to say why it failed, bounded for 100 souls. */
const TAIL = 4000;

export interface RunningSoul {
  sid: string;
  /** The soul's own process (unshare and sh exec into node, so the PID stays) and its process group. */
  pid: number;
  /** Date.now() when `soul run` was spawned. */
  spawnedAt: number;
  /** The `time` of the soul's own `connected` log line (its Welcome), once it has one. */
  connectedAt?: number;
  /** That line's `uptime_ms`: the soul process's own start (node's, after nice, unshare and sh) to its Welcome. */
  connectedUptimeMs?: number;
  /** Set when the process has exited (its exit code, null after a signal). */
  exitCode?: number | null;
  /** The tail of what it wrote (JSON log lines on stderr). */
  log: () => string;
  exited: Promise<number | null>;
}

interface Tracked {
  child: ChildProcess;
  exited: Promise<number | null>;
}

export class SoulProcesses {
  private readonly tracked = new Set<Tracked>();
  readonly running: RunningSoul[] = [];

  constructor(
    private readonly root: string,
    private readonly endpoint: EndpointSpec,
  ) {}

  configOf(sid: string): string {
    return path.join(this.root, sid, 'soul.yml');
  }

  /** Writes the soul's config and onboards it with `token` (`soul init`, the token in its environment only). */
  async init(sid: string, token: string): Promise<void> {
    const config = writeSoulConfig(path.join(this.root, sid), sid, [this.endpoint]);
    const { child, exited } = this.spawn(sid, ['init', `--config=${config}`], { SOUL_BOOTSTRAP_TOKEN: token });
    const out = tail(child);
    const code = await exited;
    if (code !== 0) throw new Error(`soul init ${sid} exited ${code}: ${out()}`);
  }

  /** Starts `soul run` for an onboarded soul (`nodeFlags` to node); `connectedAt` is set when its Welcome arrives. */
  run(sid: string, nodeFlags: string[] = []): RunningSoul {
    const spawnedAt = Date.now();
    const { child, exited } = this.spawn(sid, ['run', `--config=${this.configOf(sid)}`], {}, nodeFlags);
    const soul: RunningSoul = { sid, pid: child.pid!, spawnedAt, log: tail(child), exited };
    void exited.then((code) => {
      soul.exitCode = code;
    });
    let partial = '';
    child.stderr!.on('data', (d: Buffer) => {
      if (soul.connectedAt !== undefined) return;
      const lines = (partial + d.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        try {
          const entry = JSON.parse(line) as { time?: string; msg?: string; uptime_ms?: number };
          if (entry.msg === 'connected' && entry.time) {
            soul.connectedUptimeMs = entry.uptime_ms;
            soul.connectedAt = Date.parse(entry.time);
            return;
          }
        } catch {
          /* not a log line */
        }
      }
    });
    this.running.push(soul);
    return soul;
  }

  /** Stops one soul (SIGTERM: it says goodbye; SIGKILL to its group after `graceMs`) and forgets it. */
  async stopOne(soul: RunningSoul, graceMs = 3000): Promise<void> {
    const t = [...this.tracked].find((x) => x.child.pid === soul.pid);
    this.running.splice(this.running.indexOf(soul), 1);
    if (!t) return;
    signalGroup(t.child, 'SIGTERM');
    const timer = setTimeout(() => signalGroup(t.child, 'SIGKILL'), graceMs);
    await t.exited;
    clearTimeout(timer);
    signalGroup(t.child, 'SIGKILL');
    this.tracked.delete(t);
  }

  pids(): number[] {
    return this.running.map((s) => s.pid);
  }

  /** SIGTERM to every group, then SIGKILL to what is left after `graceMs`; resolves when all have exited. */
  async stop(graceMs = 3000): Promise<void> {
    const all = [...this.tracked];
    for (const t of all) signalGroup(t.child, 'SIGTERM');
    const timer = setTimeout(() => {
      for (const t of all) signalGroup(t.child, 'SIGKILL');
    }, graceMs);
    await Promise.all(all.map((t) => t.exited));
    clearTimeout(timer);
    // A soul's own children (a package manager it ran) may outlive it in its group.
    for (const t of all) signalGroup(t.child, 'SIGKILL');
    this.tracked.clear();
  }

  /** Synchronous SIGKILL to every group, for process 'exit' handlers where nothing can be awaited. */
  killNow(): void {
    for (const t of this.tracked) signalGroup(t.child, 'SIGKILL');
  }

  /** `nodeFlags` go to node after the package's own (the soak's `--inspect=...`). */
  private spawn(hostname: string, args: string[], env: NodeJS.ProcessEnv, nodeFlags: string[] = []): Tracked {
    // $0 is the host name and "$@" the node flags, launcher and arguments: no value is parsed by the
    // shell. The node flags are the soul package's own (its launcher runs node with them).
    // At nice 10: on a fleet every soul has its own machine; here 100 souls share the keeper's two
    // cores, and at equal priority a burst of them starves the keeper past its presence lease.
    const child = spawn(
      'nice',
      [
        '-n',
        '10',
        'unshare',
        '--uts',
        'sh',
        '-c',
        'hostname "$0" && exec node "$@"',
        hostname,
        ...SOUL_NODE_FLAGS,
        ...nodeFlags,
        SOUL_BIN(),
        ...args,
      ],
      {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      },
    );
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const t = { child, exited };
    this.tracked.add(t);
    void exited.then(() => {
      if (!this.running.some((s) => s.pid === child.pid)) this.tracked.delete(t);
    });
    return t;
  }
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    /* the group is gone */
  }
}

function tail(child: ChildProcess): () => string {
  let text = '';
  const keep = (d: Buffer) => {
    text = (text + d.toString()).slice(-TAIL);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return () => text;
}
