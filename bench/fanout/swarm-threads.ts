// bench/fanout's swarm spread over worker threads, a share of the souls in each (one thread per CPU
// by default). On a fleet every soul has a host of its own; one event loop holding a thousand souls'
// streams, step work and ledgers made the benchmark's runs wait for one core while the other was
// half idle. Each thread runs the same SwarmSoul members (bench/streams/swarm.ts) and, with real
// modules, each soul's own step handler and a command spawner of its own (spawner.ts), as a single
// loop did. The main thread starts the runs and reads the threads' figures: times travel as epoch
// milliseconds (performance.now() has a different origin in every thread).
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { SoulCert } from '../streams/swarm';
import { StepTally, type TallyData } from './real-steps';

/** What one thread is given: its souls and how to reach the keeper. */
export interface SwarmShare {
  target: string;
  ca: Uint8Array;
  keyPem: string;
  certs: SoulCert[];
  /** Each soul applies its steps with the soul's step handler, its ledger under `soulsRoot`/<sid>. */
  real: boolean;
  soulsRoot: string;
}

export type SwarmOp = 'connect' | 'reset' | 'collect' | 'close';
export interface SwarmRequest {
  id: number;
  op: SwarmOp;
}
export type SwarmAnswer = { id: number; value?: ShareWindow | null } | { id: number; error: string };

/** One thread's figures since its last reset. */
export interface ShareWindow {
  /** Epoch ms of the first step request its souls got and of the last result they sent. */
  firstRequestAt: number | null;
  lastResultAt: number | null;
  /** Step results its souls sent since they connected. */
  steps: number;
  tally: TallyData;
  /** Its event loop's delay (ms): a busy loop delays step requests and results. */
  lagP99: number;
  lagMax: number;
  /** CPU seconds of its command spawner (helpers) and of the commands they ran. */
  spawners: { helpers: number; commands: number };
}

/** The swarm seen from the main thread: `threads` workers, the souls dealt out in turn. */
export class SwarmThreads {
  private seq = 0;
  private readonly pending = new Map<
    number,
    { resolve: (v: ShareWindow | null) => void; reject: (e: Error) => void }
  >();

  private constructor(private readonly workers: Worker[]) {
    for (const w of workers) {
      w.on('message', (m: SwarmAnswer) => {
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        if ('error' in m) p.reject(new Error(m.error));
        else p.resolve(m.value ?? null);
      });
      w.on('error', (err) => {
        for (const p of this.pending.values()) p.reject(err);
        this.pending.clear();
      });
    }
  }

  static start(base: Omit<SwarmShare, 'certs'>, certs: SoulCert[], threads: number): SwarmThreads {
    const count = Math.max(1, Math.min(threads, certs.length));
    const workers = Array.from({ length: count }, (_, t) => {
      const share: SwarmShare = { ...base, certs: certs.filter((_, i) => i % count === t) };
      return new Worker(path.join(__dirname, 'swarm-thread.js'), { workerData: share });
    });
    return new SwarmThreads(workers);
  }

  get size(): number {
    return this.workers.length;
  }

  private ask(op: SwarmOp): Promise<(ShareWindow | null)[]> {
    return Promise.all(
      this.workers.map(
        (w) =>
          new Promise<ShareWindow | null>((resolve, reject) => {
            const id = ++this.seq;
            this.pending.set(id, { resolve, reject });
            const req: SwarmRequest = { id, op };
            w.postMessage(req);
          }),
      ),
    );
  }

  /** Every soul connected (its Welcome). */
  async connect(): Promise<void> {
    await this.ask('connect');
  }

  /** Starts a measured window: tallies and first/last times cleared, loop delay measured afresh. */
  async reset(): Promise<void> {
    await this.ask('reset');
  }

  /** The threads' figures of the window, merged. */
  async collect(): Promise<{
    firstRequestAt: number | null;
    lastResultAt: number | null;
    steps: number;
    tally: StepTally;
    lagP99: number;
    lagMax: number;
    spawners: { helpers: number; commands: number };
  }> {
    const parts = (await this.ask('collect')).filter((p): p is ShareWindow => p !== null);
    const times = (pick: (p: ShareWindow) => number | null) => parts.map(pick).filter((x): x is number => x !== null);
    const firsts = times((p) => p.firstRequestAt);
    const lasts = times((p) => p.lastResultAt);
    const tally = new StepTally();
    for (const p of parts) tally.absorb(p.tally);
    return {
      firstRequestAt: firsts.length ? Math.min(...firsts) : null,
      lastResultAt: lasts.length ? Math.max(...lasts) : null,
      steps: parts.reduce((a, p) => a + p.steps, 0),
      tally,
      lagP99: Math.max(0, ...parts.map((p) => p.lagP99)),
      lagMax: Math.max(0, ...parts.map((p) => p.lagMax)),
      spawners: parts.reduce(
        (a, p) => ({ helpers: a.helpers + p.spawners.helpers, commands: a.commands + p.spawners.commands }),
        { helpers: 0, commands: 0 },
      ),
    };
  }

  /** Streams closed, ledgers released, spawners stopped, threads ended. */
  async close(): Promise<void> {
    await this.ask('close').catch(() => undefined);
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
