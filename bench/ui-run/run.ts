/**
 * Run page benchmark (not a test): /ui's page of a run over N hosts (default 1,000, three steps
 * each, 10 failed), in headless Chromium against a keeper on the local stack. Measures, five times,
 * from navigation to the page showing the counts and the expanded failures, and the time to open
 * the largest collapsed group. Target: the page within 1 s for 1,000 hosts.
 * Writes bench/results/ui-run.json. Needs `make build` and `make stack`.
 *
 *   node dist/bench/ui-run/run.js [hosts]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { launch, newPage, signIn } from '../../test/ui/browser';
import { startTestKeeper } from '../../test/support/keeper';
import { repoRoot } from '../../test/support/repo';

async function main(): Promise<void> {
  const hosts = Number(process.argv[2] ?? 1000);
  const tk = await startTestKeeper({
    mutate: (doc) => {
      doc.reaper = { interval: '1h', lease_ttl: '3s' };
    },
  });
  const browser = await launch();
  try {
    const db = tk.keeper.runtime.db;
    await db('services').insert({ name: 'bench', git: 'file:///srv/bench.git', ref: 'v1' });
    const applyId = 'bench-run.create.ui';
    await db('incarnations').insert({
      name: 'bench-run',
      service: 'bench',
      covens: ['web'],
      status: 'error_locked',
      last_apply_id: applyId,
    });
    await db('incarnation_runs').insert({
      apply_id: applyId,
      incarnation: 'bench-run',
      operation: 'create',
      status: 'failed',
      phase: 'done',
      finished_at: new Date(),
      error: 'a host failed',
    });
    const rows = Array.from({ length: hosts }, (_, i) => ({
      sid: `host-${String(i).padStart(5, '0')}.bench.example.com`,
      status: i < 10 ? 'failed' : i % 3 ? 'changed' : 'ok',
    }));
    for (let i = 0; i < rows.length; i += 500) {
      const chunk = rows.slice(i, i + 500);
      await db('run_hosts').insert(chunk.map((h) => ({ apply_id: applyId, sid: h.sid, status: h.status })));
      await db('run_steps').insert(
        chunk.flatMap((h) =>
          [0, 1, 2].map((idx) => ({
            apply_id: applyId,
            sid: h.sid,
            step_index: idx,
            name: `step ${idx}`,
            module: 'core.file.present',
            status: h.status === 'failed' && idx === 2 ? 'failed' : 'ok',
            changed: h.status === 'changed' && idx === 1,
            output: h.status === 'failed' && idx === 2 ? 'permission denied' : '',
          })),
        ),
      );
    }
    const { context, page } = await newPage(browser, tk.baseUrl);
    await signIn(page, tk.adminToken);
    const load: number[] = [];
    const expand: number[] = [];
    const largest = rows.filter((r) => r.status === 'changed').length;
    for (let i = 0; i < 5; i++) {
      await page.goto('/ui/souls');
      const t0 = Date.now();
      await page.goto('/ui/incarnations/bench-run');
      await page.getByTestId('run-counts').filter({ hasText: 'failed 10' }).waitFor({ timeout: 30_000 });
      await page
        .locator('details.outcome-group[data-outcome="failed"] details.run-host[open] tbody tr')
        .nth(29)
        .waitFor();
      load.push(Date.now() - t0);
      const t1 = Date.now();
      await page.locator('details.outcome-group[data-outcome="changed"] > summary').click();
      await page.waitForFunction(
        (n) => document.querySelectorAll('details.outcome-group[data-outcome="changed"] details.run-host').length === n,
        largest,
      );
      expand.push(Date.now() - t1);
    }
    await context.close();
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const result = {
      benchmark: 'ui-run',
      date: new Date().toISOString(),
      machine: { cores: os.cpus().length, memory_gb: Math.round(os.totalmem() / 2 ** 30) },
      hosts,
      steps_per_host: 3,
      failed_hosts: 10,
      page_ready_ms: { median: median(load), max: Math.max(...load), runs: load },
      open_largest_group_ms: { hosts: largest, median: median(expand), max: Math.max(...expand), runs: expand },
      target: { page_ready_ms: 1000 },
    };
    const out = path.join(repoRoot(), 'bench', 'results', 'ui-run.json');
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, JSON.stringify(result, null, 2));
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await browser.close();
    await tk.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
