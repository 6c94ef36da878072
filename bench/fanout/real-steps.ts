// bench/fanout --real-modules: each swarm soul applies its steps with the soul's own step handler,
// agent/steps.ts createStateStepHandler (the state modules, a step ledger of its own, commands run
// as child processes): the code `soul run` uses, not an imitation of it. Of a soul's configuration
// that handler reads only `paths.seed` (its ledger is <seed>/ledger) and `ledger.retention_days`;
// the rest (endpoints, CA, modules folder) is about connecting, which the swarm does itself, so the
// configuration built here leaves it empty. Each soul's seed is <root>/<sid>, so every soul has its
// own ledger directory and its own lock on it, as on a host of its own. The one thing not the
// soul's default is where commands are spawned from (`runner`, see spawner.ts).
import path from 'node:path';
import { DEFAULT_LEDGER_RETENTION_DAYS, type SoulConfig } from '../../agent/config';
import type { CommandRunner } from '../../agent/exec/runner';
import { createStateStepHandler, type StepHandler, type StepReply } from '../../agent/steps';
import { swarmSoulprint } from '../streams/swarm';

/** The minimal SoulConfig createStateStepHandler needs for a swarm soul seeded under `root`. */
export function swarmSoulConfig(sid: string, root: string): SoulConfig {
  const seed = path.join(root, sid);
  return {
    file: '(bench/fanout swarm: no file)',
    sid,
    paths: { modules: path.join(seed, 'modules'), seed },
    keeper: { endpoints: [], tls: {} },
    ledger: { retention_days: DEFAULT_LEDGER_RETENTION_DAYS },
  };
}

function quantile(sorted: number[], q: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

const ms = (x: number) => Math.round(x * 10) / 10;

/** A tally's raw figures, as a swarm thread sends them to be merged (swarm-threads.ts). */
export interface TallyData {
  times: [string, number[]][];
  counts: { steps: number; changed: number; failed: number; replayed: number };
  failures: string[];
}

/**
 * What the handlers did over one measured run: outcomes, and each module's handler wall time
 * (request in -> reply out on the soul, including waiting for the thread pool and child processes
 * the other souls in this process hold), which is where a run's time on the souls goes.
 */
export class StepTally {
  private times = new Map<string, number[]>();
  private counts = { steps: 0, changed: 0, failed: 0, replayed: 0 };
  private failures: string[] = [];

  reset(): void {
    this.times = new Map();
    this.counts = { steps: 0, changed: 0, failed: 0, replayed: 0 };
    this.failures = [];
  }

  add(module: string, wallMs: number, r: StepReply): void {
    let t = this.times.get(module);
    if (!t) this.times.set(module, (t = []));
    t.push(wallMs);
    this.counts.steps++;
    if (r.changed) this.counts.changed++;
    if (!r.ok) {
      this.counts.failed++;
      if (this.failures.length < 5) this.failures.push(`${module}: ${r.output}`);
    }
    if (r.replayed) this.counts.replayed++;
  }

  data(): TallyData {
    return { times: [...this.times], counts: { ...this.counts }, failures: [...this.failures] };
  }

  /** Adds another thread's tally to this one. */
  absorb(d: TallyData): void {
    for (const [module, t] of d.times) {
      const mine = this.times.get(module);
      if (mine) mine.push(...t);
      else this.times.set(module, [...t]);
    }
    for (const k of Object.keys(this.counts) as (keyof TallyData['counts'])[]) this.counts[k] += d.counts[k];
    this.failures.push(...d.failures.slice(0, Math.max(0, 5 - this.failures.length)));
  }

  summary(): Record<string, unknown> {
    const modules: Record<string, unknown> = {};
    for (const [name, t] of [...this.times].sort(([a], [b]) => a.localeCompare(b))) {
      const s = [...t].sort((a, b) => a - b);
      modules[name] = {
        steps: s.length,
        mean_ms: ms(s.reduce((a, b) => a + b, 0) / s.length),
        p50_ms: ms(quantile(s, 0.5)),
        p99_ms: ms(quantile(s, 0.99)),
        max_ms: ms(s[s.length - 1]!),
      };
    }
    return {
      ...this.counts,
      ...(this.failures.length ? { failures_sample: this.failures } : {}),
      handler_wall_time: modules,
    };
  }
}

/** The real step handler of one swarm soul, timed into `tally`. close() releases its ledger lock. */
export async function openRealStepHandler(
  sid: string,
  root: string,
  tally: StepTally,
  runner: CommandRunner,
): Promise<StepHandler> {
  const inner = await createStateStepHandler({
    sid,
    config: swarmSoulConfig(sid, root),
    soulprint: swarmSoulprint(sid),
    runner,
  });
  return {
    async handle(req, ctx) {
      const t0 = performance.now();
      const reply = await inner.handle(req, ctx);
      tally.add(req.module, performance.now() - t0, reply);
      return reply;
    },
    close: async () => {
      await inner.close?.();
    },
  };
}
