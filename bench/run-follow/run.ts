/**
 * Run-following benchmark (not a test): how soon a client learns that a run ended, by the three
 * ways the keeper offers: `?wait=30s` on the run report, the SSE `end` event, and polling the report
 * every 50 ms (for comparison). Each is measured against the run's `finished_at` as PostgreSQL
 * recorded it (same machine, same clock), over R runs of the example service on one real soul.
 * Target: `?wait` answers within 100 ms of the end. Writes bench/results/run-follow.json.
 *
 *   node dist/bench/run-follow/run.js [runs]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { api, gitRepoFrom, startRunKeeper, startSouls, tempDir } from '../../test/runs/keeper';
import { repoRoot } from '../../test/support/repo';

async function endEvent(url: string, token: string): Promise<number> {
  const res = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error('the stream ended without an end event');
    buf += dec.decode(value, { stream: true });
    if (buf.includes('event: end\n')) {
      const at = Date.now();
      await reader.cancel();
      return at;
    }
  }
}

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? 10);
  const root = tempDir('bench-follow-');
  const k = await startRunKeeper();
  const souls = await startSouls(k, path.join(root, 'souls'), [['edge']]);
  try {
    const url = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'motd'),
      path.join(root, 'motd.git'),
      'v3',
    );
    await api(k, 'POST', '/v1/services', { name: 'motd', git: url, ref: 'v3' });
    const input = (i: number) => ({ root: path.join(root, 'out'), message: `m${i}`, package: 'git' });
    const created = await api(k, 'POST', '/v1/incarnations', {
      name: 'follow',
      service: 'motd',
      covens: ['edge'],
      input: input(0),
    });
    await api(k, 'GET', `/v1/incarnations/follow/runs/${created.body.apply_id}?wait=60s`);
    const lag: Record<'wait' | 'sse' | 'poll50', number[]> = { wait: [], sse: [], poll50: [] };
    const finishedAt = async (applyId: string) =>
      Date.parse((await api(k, 'GET', `/v1/incarnations/follow/runs/${applyId}`)).body.finished_at);
    for (let i = 1; i <= runs; i++) {
      for (const how of ['wait', 'sse', 'poll50'] as const) {
        const r = await api(k, 'POST', '/v1/incarnations/follow/runs', { operation: 'create', input: input(i) });
        const base = `${k.baseUrl}/v1/incarnations/follow/runs/${r.body.apply_id}`;
        let learned: number;
        if (how === 'wait') {
          await fetch(`${base}?wait=30s`, { headers: { Authorization: `Bearer ${k.adminToken}` } }).then((x) =>
            x.json(),
          );
          learned = Date.now();
        } else if (how === 'sse') {
          learned = await endEvent(`${base}/events`, k.adminToken);
        } else {
          for (;;) {
            const rep = (await (
              await fetch(base, { headers: { Authorization: `Bearer ${k.adminToken}` } })
            ).json()) as { status: string };
            if (rep.status !== 'running') {
              learned = Date.now();
              break;
            }
            await new Promise((res) => setTimeout(res, 50));
          }
        }
        lag[how].push(learned - (await finishedAt(r.body.apply_id)));
      }
      process.stderr.write(`run ${i}/${runs}\n`);
    }
    const stats = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      return { median_ms: s[Math.floor(s.length / 2)], max_ms: s[s.length - 1], runs: xs };
    };
    const result = {
      benchmark: 'run-follow',
      date: new Date().toISOString(),
      machine: { cores: os.cpus().length, memory_gb: Math.round(os.totalmem() / 2 ** 30) },
      what: "ms from the run's finished_at (PostgreSQL) until the client knew the run had ended",
      wait: stats(lag.wait),
      sse_end_event: stats(lag.sse),
      poll_every_50ms: stats(lag.poll50),
      target: { wait_ms: 100 },
    };
    const out = path.join(repoRoot(), 'bench', 'results', 'run-follow.json');
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, JSON.stringify(result, null, 2));
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await Promise.all(souls.map((s) => s.run.kill()));
    await k.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
