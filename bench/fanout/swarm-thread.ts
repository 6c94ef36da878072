// One worker thread of bench/fanout's swarm (swarm-threads.ts): holds its share of the souls, each
// on its own TLS stream, and answers the main thread's requests (connect, reset, collect, close).
import path from 'node:path';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import type { StepHandler } from '../../agent/steps';
import { SwarmSoul } from '../streams/swarm';
import { StepTally, openRealStepHandler } from './real-steps';
import { SpawnerPool } from './spawner';
import type { ShareWindow, SwarmAnswer, SwarmRequest, SwarmShare } from './swarm-threads';
import { pool } from '../pool';

/** A loop-delay histogram in ms: p99 and max. */
function lagOf(h: IntervalHistogram): { p99: number; max: number } {
  return { p99: Math.round(h.percentile(99) / 1e4) / 100, max: Math.round(h.max / 1e4) / 100 };
}

const epoch = (t: number | undefined) => (t === undefined ? null : Math.round(performance.timeOrigin + t));

async function serve(share: SwarmShare): Promise<void> {
  const port = parentPort!;
  const tally = new StepTally();
  const handlers: StepHandler[] = [];
  const souls: SwarmSoul[] = [];
  // One command spawner per thread: its souls' forks come from a small process, as on a host.
  const spawners = share.real ? await SpawnerPool.start(1) : undefined;
  let lag: IntervalHistogram | undefined;
  const ca = Buffer.from(share.ca);

  const ops: Record<SwarmRequest['op'], () => Promise<ShareWindow | null>> = {
    async connect() {
      if (share.real) {
        const opened: StepHandler[] = new Array(share.certs.length);
        await pool(
          share.certs.map((_, i) => i),
          50,
          async (i) => {
            opened[i] = await openRealStepHandler(share.certs[i]!.sid, share.soulsRoot, tally, spawners!.runner);
          },
        );
        handlers.push(...opened);
      }
      for (const [i, c] of share.certs.entries()) {
        souls.push(
          new SwarmSoul(
            c.sid,
            share.target,
            SwarmSoul.credentials(ca, share.keyPem, c.certPem),
            share.real ? { handler: handlers[i]! } : { answerSteps: true },
          ),
        );
      }
      await pool(souls, 100, async (s) => {
        await s.connect();
      });
      return null;
    },
    async reset() {
      tally.reset();
      for (const s of souls) s.resetWindow();
      lag?.disable();
      lag = monitorEventLoopDelay({ resolution: 10 });
      lag.enable();
      return null;
    },
    async collect() {
      // Read, not stopped: the run's start reads the spawners' CPU through here too.
      const l = lag ? lagOf(lag) : { p99: 0, max: 0 };
      const firsts = souls.map((s) => s.firstRequestAt).filter((x): x is number => x !== undefined);
      const lasts = souls.map((s) => s.lastResultAt).filter((x): x is number => x !== undefined);
      return {
        firstRequestAt: firsts.length ? epoch(Math.min(...firsts)) : null,
        lastResultAt: lasts.length ? epoch(Math.max(...lasts)) : null,
        steps: souls.reduce((a, s) => a + s.steps, 0),
        tally: tally.data(),
        lagP99: l.p99,
        lagMax: l.max,
        spawners: spawners?.cpuSeconds() ?? { helpers: 0, commands: 0 },
      };
    },
    async close() {
      for (const s of souls) s.close();
      await Promise.allSettled(handlers.map((h) => h.close?.()));
      await spawners?.close();
      return null;
    },
  };

  port.on('message', (m: SwarmRequest) => {
    ops[m.op]().then(
      (value) => port.postMessage({ id: m.id, value } satisfies SwarmAnswer),
      (err: Error) =>
        port.postMessage({ id: m.id, error: `${path.basename(__filename)}: ${err.message}` } satisfies SwarmAnswer),
    );
  });
}

void serve(workerData as SwarmShare);
