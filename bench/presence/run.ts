// Benchmark (not a test): the cost of presence leases at fleet size, for the old and new defaults.
//   node dist/bench/presence/run.js [N ...]   (default: 1000 10000)
// Per N and lease_ttl (15 s, the old default; 3.5 s, the default that shows a silent soul as
// disconnected within 5 s): N leases acquired on a private redis-server (never the stack's), then
// refreshed as the keeper's ticker does (every lease_ttl/3, all sessions at once) for 10 ticks.
// Measures the wall time of one tick, the keeper-side CPU per second (this process) and Redis's CPU
// per second (/proc of the private server), i.e. the steady cost of holding N souls' presence. The
// heartbeat messages themselves (one tiny frame per soul per tick on its stream) are measured with
// real streams by bench/streams. Writes bench/results/presence.json.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { silentLogger } from '../../common/logger';
import { connectCache } from '../../platform/cache';
import { Presence } from '../../hub/presence';
import { startRedisInstance } from '../../test/support/redis-instance';
import { repoRoot } from '../../test/support/repo';

const CLK_TCK = 100;
function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}
const round = (x: number) => Math.round(x * 1000) / 1000;

async function main(): Promise<void> {
  const sizes = process.argv
    .slice(2)
    .map(Number)
    .filter((n) => n > 0);
  const results: unknown[] = [];
  for (const n of sizes.length ? sizes : [1000, 10000]) {
    for (const ttlMs of [15000, 3500]) {
      const password = randomBytes(8).toString('hex');
      const redis = await startRedisInstance(password);
      // Stopped in `finally`: a failed measurement must not leave the server running.
      try {
        const cache = await connectCache(redis.addr, password, silentLogger);
        const redisPid = Number(
          fs.readdirSync('/proc').find((p) => {
            // redis-server rewrites its title to "redis-server 127.0.0.1:<port>".
            try {
              return /^\d+$/.test(p) && fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(redis.addr);
            } catch {
              return false;
            }
          }),
        );
        const presence = new Presence(cache, 'bench', ttlMs);
        const sids = Array.from({ length: n }, (_, i) => `s${i}.bench.test`);
        const epochs = new Map<string, number>();
        for (let i = 0; i < n; i += 500)
          await Promise.all(
            sids.slice(i, i + 500).map(async (s) => {
              epochs.set(s, await presence.acquire(s, 'x'));
            }),
          );
        const interval = Math.max(200, Math.floor(ttlMs / 3));
        const ticks: number[] = [];
        const cpu0 = process.cpuUsage();
        const r0 = cpuSeconds(redisPid);
        const t0 = Date.now();
        for (let t = 0; t < 10; t++) {
          const start = Date.now();
          await Promise.all(sids.map((s) => presence.refresh(s, epochs.get(s)!)));
          ticks.push(Date.now() - start);
          await new Promise((r) => setTimeout(r, Math.max(0, interval - (Date.now() - start))));
        }
        const wall = (Date.now() - t0) / 1000;
        const cpu = process.cpuUsage(cpu0);
        const row = {
          souls: n,
          lease_ttl_ms: ttlMs,
          heartbeat_interval_ms: interval,
          refreshes_per_s: round(n / (interval / 1000)),
          tick_ms_median: ticks.sort((a, b) => a - b)[5],
          tick_ms_max: ticks[9],
          keeper_cpu_per_s: round((cpu.user + cpu.system) / 1e6 / wall),
          redis_cpu_per_s: round((cpuSeconds(redisPid) - r0) / wall),
        };
        console.log(JSON.stringify(row));
        results.push(row);
        await cache.quit().catch(() => undefined);
      } finally {
        await redis.stop();
      }
    }
  }
  const out = path.join(repoRoot(), 'bench', 'results');
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(
    path.join(out, 'presence.json'),
    JSON.stringify({ measured_at: new Date().toISOString(), results }, null, 2) + '\n',
  );
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
