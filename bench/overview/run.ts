/**
 * Overview benchmark (not a test): GET /v1/overview and the /ui overview page over a fleet of
 * 1,000 souls (a day of status changes) and 10,000 runs spread over 14 days (10 hosts each, 1 in 20
 * failed), against a keeper on the local stack. Measures the API answer 20 times and the page (from
 * navigation to every chart drawn) 5 times. Target (issue 35): the page in under a second.
 * Writes bench/results/overview.json. Needs `make build` and `make stack`.
 *
 *   node dist/bench/overview/run.js [souls] [runs]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { launch, newPage, signIn } from '../../test/ui/browser';
import { clientFor } from '../../test/api/helpers';
import { startTestKeeper } from '../../test/support/keeper';
import { repoRoot } from '../../test/support/repo';

const STATUSES = ['connected', 'connected', 'connected', 'disconnected', 'pending'];

async function main(): Promise<void> {
  const souls = Number(process.argv[2] ?? 1000);
  const runs = Number(process.argv[3] ?? 10_000);
  const tk = await startTestKeeper({
    mutate: (doc) => {
      doc.reaper = { interval: '1h', lease_ttl: '3s' };
    },
  });
  const browser = await launch();
  try {
    const db = tk.keeper.runtime.db;
    const sids = Array.from({ length: souls }, (_, i) => `host${i}.bench.example.com`);
    for (let i = 0; i < souls; i += 500) {
      await db('souls').insert(
        sids
          .slice(i, i + 500)
          .map((sid, j) => ({ sid, transport: 'agent', covens: ['web'], status: STATUSES[(i + j) % 5] })),
      );
    }
    // A day of flapping: every soul changed status about three times.
    await db.raw(
      `insert into soul_status_changes (at, from_status, to_status)
      select now() - random() * interval '24 hours', case when g % 2 = 0 then 'connected' else 'disconnected' end,
        case when g % 2 = 0 then 'disconnected' else 'connected' end from generate_series(1, ?) g`,
      [souls * 3],
    );
    await db('services').insert({ name: 'bench', git: 'file:///srv/bench.git', ref: 'v1' });
    const incs = Array.from({ length: 100 }, (_, i) => `app${i}`);
    await db('incarnations').insert(
      incs.map((name, i) => ({
        name,
        service: 'bench',
        covens: ['web'],
        status: i % 25 === 0 ? 'error_locked' : 'ready',
        drift_status: i % 10 === 1 ? 'drifted' : 'in_sync',
      })),
    );
    const now = Date.now();
    for (let i = 0; i < runs; i += 1000) {
      const chunk = Array.from({ length: Math.min(1000, runs - i) }, (_, j) => i + j);
      const created = (n: number) => new Date(now - (n / runs) * 14 * 86_400_000);
      await db('incarnation_runs').insert(
        chunk.map((n) => ({
          apply_id: `app${n % 100}.apply.${n}`,
          incarnation: `app${n % 100}`,
          operation: 'apply',
          status: n % 20 === 0 ? 'failed' : 'succeeded',
          phase: 'done',
          error: n % 20 === 0 ? 'a host failed' : null,
          created_at: created(n),
          finished_at: new Date(created(n).getTime() + 5000 + (n % 97) * 400),
        })),
      );
      await db('run_hosts').insert(
        chunk.flatMap((n) =>
          sids.slice((n * 10) % souls, ((n * 10) % souls) + 10).map((sid, k) => ({
            apply_id: `app${n % 100}.apply.${n}`,
            sid,
            status: n % 20 === 0 && k === 0 ? 'failed' : k < n % 7 ? 'changed' : 'ok',
          })),
        ),
      );
    }
    await db.raw('analyze');
    const api = clientFor(tk);
    const answer: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t0 = process.hrtime.bigint();
      const a = await api('GET', '/v1/overview');
      if (a.status !== 200) throw new Error(a.text);
      answer.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    const { context, page } = await newPage(browser, tk.baseUrl);
    await signIn(page, tk.adminToken);
    const load: number[] = [];
    // The page marks the moment it is drawn itself (a MutationObserver), so the figure does not
    // include Playwright's own round trips, which cost hundreds of ms on a loaded machine.
    await page.addInitScript(() => {
      const w = window as unknown as { __drawnAt?: number };
      const drawn = () =>
        document.querySelector('[data-testid="chart-connected-souls"] polyline') !== null &&
        document.querySelectorAll('[data-testid="last-runs"] tbody tr').length >= 10;
      new MutationObserver((_m, obs) => {
        if (w.__drawnAt === undefined && drawn()) {
          w.__drawnAt = performance.now();
          obs.disconnect();
        }
      }).observe(document, { childList: true, subtree: true });
    });
    // Where the page's time goes, from the browser's own clock (ms since navigation start): the HTML,
    // the script bundle, the GET /v1/overview answer, and the charts drawn. Under load the waits for a
    // core stretch every part; the parts show which of them is the page's own work.
    const parts: { html: number; bundle: number; overview_request: number; overview_answer: number; drawn: number }[] =
      [];
    for (let i = 0; i < 5; i++) {
      await page.goto('/ui/souls');
      const t0 = Date.now();
      await page.goto('/ui/');
      await page.getByTestId('chart-connected-souls').locator('polyline').waitFor({ timeout: 30_000 });
      await page.getByTestId('last-runs').locator('tbody tr').nth(9).waitFor();
      load.push(Date.now() - t0);
      parts.push(
        await page.evaluate(() => {
          const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
          const res = performance.getEntriesByType('resource') as PerformanceResourceTiming[];
          const bundle = res.find((r) => r.name.endsWith('.js'));
          const ov = res.find((r) => r.name.includes('/v1/overview'));
          const r = (n: number | undefined) => Math.round(n ?? -1);
          return {
            html: r(nav.responseEnd),
            bundle: r(bundle?.responseEnd),
            overview_request: r(ov?.startTime),
            overview_answer: r(ov?.responseEnd),
            drawn: r((window as unknown as { __drawnAt?: number }).__drawnAt),
          };
        }),
      );
    }
    await context.close();
    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
    const median = (xs: number[]) => sorted(xs)[Math.floor(xs.length / 2)]!;
    const result = {
      benchmark: 'overview',
      date: new Date().toISOString(),
      machine: { cores: os.cpus().length, memory_gb: Math.round(os.totalmem() / 2 ** 30) },
      souls,
      runs,
      hosts_per_run: 10,
      status_changes: souls * 3,
      api_answer_ms: {
        median: Math.round(median(answer)),
        p95: Math.round(sorted(answer)[Math.floor(answer.length * 0.95)]!),
        max: Math.round(Math.max(...answer)),
      },
      page_ready_ms: { median: median(load), max: Math.max(...load), runs: load },
      page_drawn_ms: { median: median(parts.map((p) => p.drawn)), runs: parts.map((p) => p.drawn) },
      page_parts_ms: parts,
      load_average_1m: Math.round(os.loadavg()[0]! * 10) / 10,
      target: { page_ready_ms: 1000 },
    };
    const out = path.join(repoRoot(), 'bench', 'results', 'overview.json');
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
