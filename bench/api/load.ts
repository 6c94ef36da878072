// A closed-loop HTTP load generator: `concurrency` clients, each sending its next request as soon as
// the previous answer arrives, over keep-alive connections, for a fixed time. It runs in a worker
// thread so its own work never shares an event loop with the keeper it measures.
import http from 'node:http';

export interface LoadSpec {
  name: string;
  baseUrl: string;
  token: string;
  paths: string[];
  concurrency: number;
  warmupMs: number;
  durationMs: number;
}
export interface LoadResult {
  name: string;
  concurrency: number;
  duration_s: number;
  requests: number;
  errors: number;
  rps: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  max_ms: number;
  statuses: Record<string, number>;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function once(agent: http.Agent, url: URL, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: spec.concurrency });
  const urls = spec.paths.map((p) => new URL(p, spec.baseUrl));
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  const start = performance.now();
  const measureFrom = start + spec.warmupMs;
  const end = measureFrom + spec.durationMs;
  const client = async () => {
    for (;;) {
      const t0 = performance.now();
      if (t0 >= end) return;
      const url = urls[Math.floor(Math.random() * urls.length)];
      let status = 0;
      try {
        status = await once(agent, url, spec.token);
      } catch {
        status = 0;
      }
      const t1 = performance.now();
      if (t0 < measureFrom) continue;
      latencies.push(t1 - t0);
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (status !== 200) errors++;
    }
  };
  await Promise.all(Array.from({ length: spec.concurrency }, client));
  agent.destroy();
  const sorted = Float64Array.from(latencies).sort();
  const round = (n: number) => Math.round(n * 100) / 100;
  return {
    name: spec.name,
    concurrency: spec.concurrency,
    duration_s: spec.durationMs / 1000,
    requests: sorted.length,
    errors,
    rps: Math.round(sorted.length / (spec.durationMs / 1000)),
    p50_ms: round(percentile(sorted, 50)),
    p90_ms: round(percentile(sorted, 90)),
    p99_ms: round(percentile(sorted, 99)),
    max_ms: round(sorted[sorted.length - 1] ?? NaN),
    statuses,
  };
}
