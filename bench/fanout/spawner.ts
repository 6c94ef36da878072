// A CommandRunner for the swarm's souls that runs each command from one of a few small helper
// processes (spawner-child.ts) instead of from the swarm's own process. Node spawns a child with
// fork() on its main thread, and fork() costs in proportion to the parent's memory: from the swarm
// (a thousand souls' TLS streams, about a gigabyte) each spawn stalled the event loop for tens of
// milliseconds, a thousand of them for long enough that heartbeats stopped and the keeper dropped
// every stream (lease TTL). A real soul forks from its own small process, so the helpers' forks are
// the closer stand-in. The command, its arguments, environment, timeout, exit status and output are
// exactly what the soul's runner would use and report: the helpers run it with that runner.
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { CommandResult, CommandRunner } from '../../agent/exec/runner';
import { cpuTimes } from '../fleet/proc';
import type { SpawnAnswer, SpawnRequest } from './spawner-child';

interface Pending {
  child: number;
  resolve: (r: CommandResult) => void;
  reject: (e: Error) => void;
}

export class SpawnerPool {
  private seq = 0;
  private turn = 0;
  private readonly pending = new Map<number, Pending>();

  private constructor(private readonly children: ChildProcess[]) {
    children.forEach((child, i) => {
      child.on('message', (m: SpawnAnswer) => {
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        if ('result' in m) p.resolve(m.result);
        else p.reject(new Error(m.error));
      });
      child.on('exit', (code, signal) => {
        for (const [id, p] of this.pending) {
          if (p.child !== i) continue;
          this.pending.delete(id);
          p.reject(new Error(`command spawner ${i} exited (${signal ?? code}) before answering`));
        }
      });
    });
  }

  /** Starts `count` helpers and waits until each listens. */
  static async start(count: number): Promise<SpawnerPool> {
    const children = Array.from({ length: count }, () =>
      // No inherited --max-old-space-size etc.: the helper is meant to stay small.
      fork(path.join(__dirname, 'spawner-child.js'), [], {
        execArgv: [],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      }),
    );
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve, reject) => {
            c.once('message', () => resolve());
            c.once('exit', (code) => reject(new Error(`command spawner exited (${code}) at start`)));
          }),
      ),
    );
    return new SpawnerPool(children);
  }

  get size(): number {
    return this.children.length;
  }

  /** CPU of the helpers themselves (forking, IPC) and of the ended commands they ran (each is waited for). */
  cpuSeconds(): { helpers: number; commands: number } {
    return {
      helpers: this.children.reduce((a, c) => a + cpuTimes(c.pid!).self, 0),
      commands: this.children.reduce((a, c) => a + cpuTimes(c.pid!).children, 0),
    };
  }

  /** Round robin over the helpers; each forks its commands one after another, as its loop allows. */
  readonly runner: CommandRunner = (cmd) =>
    new Promise<CommandResult>((resolve, reject) => {
      const child = this.turn++ % this.children.length;
      const id = ++this.seq;
      this.pending.set(id, { child, resolve, reject });
      const req: SpawnRequest = { id, cmd };
      this.children[child]!.send(req);
    });

  /** Closes the channels; each helper exits when its channel closes. */
  async close(): Promise<void> {
    await Promise.all(
      this.children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            c.once('exit', () => resolve());
            c.disconnect();
          }),
      ),
    );
  }
}
