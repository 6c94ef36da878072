// The soul's metrics listener (interface spec 1.2): off by default; with `metrics.port` set, a
// Prometheus endpoint on 127.0.0.1 only (the soul's metrics are for the host's own scraper or an
// SSH tunnel, never the network). prom-client is loaded only when it is on, so an idle soul without
// it carries none of it.
import { registerFullGcMetrics } from '../common/heap-after-gc';
import http from 'node:http';
import { X509Certificate } from 'node:crypto';
import type { StepReply, StepHandler } from './steps';
import { ledgerUsage, type LedgerUsage } from './ledger/usage';

export interface SoulMetrics {
  /** Wraps a step handler so every step is counted by module and outcome and timed. */
  wrap(handler: StepHandler): StepHandler;
  reconnect(): void;
  /** A certificate rotation's outcome: renewed, refused (by the keeper), invalid (refused by the soul). */
  rotation(outcome: 'renewed' | 'refused' | 'invalid'): void;
  /** A Welcome from this keeper: soul_connected{kid} is 1. */
  connected(kid: string): void;
  /** The stream ended: soul_connected is 0 for the last keeper. */
  disconnected(): void;
  /** The certificate the soul now connects with (after a rotation). */
  certificate(certPem: string): void;
  close(): Promise<void>;
}

/** What a disabled listener costs: nothing. */
export const NO_METRICS: SoulMetrics = {
  wrap: (h) => h,
  reconnect: () => undefined,
  rotation: () => undefined,
  connected: () => undefined,
  disconnected: () => undefined,
  certificate: () => undefined,
  close: async () => undefined,
};

function outcome(a: StepReply): string {
  if (!a.ok) return 'failed';
  if (a.replayed) return 'replayed';
  return a.changed ? 'changed' : 'ok';
}

export async function startSoulMetrics(o: { port: number; ledgerDir: string; certPem: string }): Promise<SoulMetrics> {
  // Loaded here, not at the top: a soul without the listener never pays for the library.
  const client = (await import('prom-client')).default;
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, prefix: 'soul_' });
  registerFullGcMetrics(client, registry, 'soul');
  const steps = new client.Counter({
    name: 'soul_steps_total',
    help: 'steps applied, by module and outcome (changed, ok, failed, replayed, error)',
    labelNames: ['module', 'outcome'],
    registers: [registry],
  });
  const duration = new client.Histogram({
    name: 'soul_step_duration_seconds',
    help: 'time to apply a step, by module',
    labelNames: ['module'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const reconnects = new client.Counter({
    name: 'soul_stream_reconnects_total',
    help: 'times the soul started to reconnect its event stream',
    registers: [registry],
  });
  // The ledger's size on disk, read at each scrape (one stat per journal: a few thousand at most
  // within the retention, docs/agents.md "Ledger size"); both gauges share one read per scrape.
  let read: { at: number; usage: Promise<LedgerUsage> } | undefined;
  const usage = () => {
    if (!read || Date.now() - read.at > 1000) read = { at: Date.now(), usage: ledgerUsage(o.ledgerDir) };
    return read.usage;
  };
  new client.Gauge({
    name: 'soul_ledger_journals',
    help: 'apply journals in the step ledger',
    registers: [registry],
    async collect() {
      this.set((await usage()).files);
    },
  });
  new client.Gauge({
    name: 'soul_ledger_bytes',
    help: "bytes of the step ledger's journals (their file sizes)",
    registers: [registry],
    async collect() {
      this.set((await usage()).bytes);
    },
  });
  const notAfter = (pem: string) => Date.parse(new X509Certificate(pem).validTo) / 1000;
  const expiry = new client.Gauge({
    name: 'soul_certificate_not_after_seconds',
    help: "the soul certificate's expiry (Unix time)",
    registers: [registry],
  });
  expiry.set(notAfter(o.certPem));
  const rotations = new client.Counter({
    name: 'soul_certificate_rotations_total',
    help: 'certificate rotations on the live stream, by outcome (renewed, refused by the keeper, invalid: refused by the soul)',
    labelNames: ['outcome'],
    registers: [registry],
  });

  // One series per keeper this process has been on: 1 for the current one, 0 for the others, so a
  // dashboard shows which keeper a soul is on and that it moved (issue 37 row 17).
  const connected = new client.Gauge({
    name: 'soul_connected',
    help: 'whether the event stream to this keeper is up (1) or not (0), by keeper kid',
    labelNames: ['kid'],
    registers: [registry],
  });
  const kids = new Set<string>();

  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/metrics') {
      res.statusCode = 404;
      res.end('not found: GET /metrics\n');
      return;
    }
    registry.metrics().then(
      (text) => {
        res.setHeader('Content-Type', registry.contentType);
        res.end(text);
      },
      () => {
        res.statusCode = 500;
        res.end('metrics collection failed\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    wrap: (handler) => ({
      ...handler,
      async handle(req, ctx) {
        const end = duration.startTimer({ module: req.module });
        try {
          const answer = await handler.handle(req, ctx);
          steps.inc({ module: req.module, outcome: outcome(answer) });
          return answer;
        } catch (err) {
          steps.inc({ module: req.module, outcome: 'error' });
          throw err;
        } finally {
          end();
        }
      },
    }),
    reconnect: () => reconnects.inc(),
    rotation: (outcome) => rotations.inc({ outcome }),
    connected: (kid) => {
      for (const k of kids) connected.set({ kid: k }, 0);
      kids.add(kid);
      connected.set({ kid }, 1);
    },
    disconnected: () => {
      for (const k of kids) connected.set({ kid: k }, 0);
    },
    certificate: (pem) => expiry.set(notAfter(pem)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
