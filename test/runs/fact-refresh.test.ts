// Fact queries with --refresh (issue 34, docs/executions.md): the keeper asks the selected souls for
// their facts now instead of answering from the stored ones. Real souls, each in its own UTS
// namespace: one's host name is changed under it (a fact a soul otherwise reports at its next facts
// tick, a minute later); a plain query still shows the stored name, a refreshed one the new name and
// finds the host by it. A soul that cannot answer (stopped) is listed as unanswered with its stored facts.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { clientFor } from '../api/helpers';
import type { TestKeeper } from '../support/keeper';
import { repoRoot } from '../support/repo';
import { startRunKeeper, startSouls, stopRunRig, tempDir, type TestSoul } from './keeper';

describe('fact queries: --refresh asks the souls first', function () {
  this.timeout(180_000);
  let k: TestKeeper;
  let api: ReturnType<typeof clientFor>;
  let root: string;
  let souls: TestSoul[];
  const renamed = `renamed-${process.pid}`;

  before(async () => {
    root = tempDir('fact-refresh-');
    k = await startRunKeeper();
    api = clientFor(k);
    souls = await startSouls(k, path.join(root, 'souls'), [['fresh'], ['fresh']]);
  });
  after(async () => {
    for (const s of souls ?? []) s.run.child.kill('SIGCONT');
    await stopRunRig({ souls, k, root });
  });

  const hostnames = (body: any) => Object.fromEntries(body.items.map((s: any) => [s.sid, s.facts.hostname]));

  it('answers with the facts the souls report now, and evaluates where on them', async () => {
    const [a, b] = souls as [TestSoul, TestSoul];
    // The soul's own UTS namespace (test/agents/harness.ts spawnSoul): its host name changes under it.
    execFileSync('nsenter', ['-t', String(a.run.child.pid), '-u', 'hostname', renamed]);
    const stored = await api('GET', '/v1/souls?coven=fresh&fields=hostname');
    assert.equal(stored.status, 200, stored.text);
    assert.equal(hostnames(stored.body)[a.sid], a.sid, 'without refresh: the stored facts');
    assert.equal(stored.body.refresh, undefined);

    const where = encodeURIComponent(`soulprint.self.hostname == "${renamed}"`);
    const fresh = await api('GET', `/v1/souls?coven=fresh&refresh=true&fields=hostname&where=${where}`);
    assert.equal(fresh.status, 200, fresh.text);
    assert.deepEqual(hostnames(fresh.body), { [a.sid]: renamed }, 'found by its new host name');
    assert.deepEqual(fresh.body.refresh, { asked: 2, answered: 2, unanswered: [] });
    assert.ok(fresh.body.items[0].soulprint_age_s <= 5, JSON.stringify(fresh.body.items[0]));
    // The fresh facts are stored: a plain query now answers them too.
    const after = await api('GET', '/v1/souls?coven=fresh&fields=hostname');
    assert.deepEqual(hostnames(after.body), { [a.sid]: renamed, [b.sid]: b.sid });
  });

  it('keeperctl souls list --refresh prints the fresh facts and says who answered; a stopped soul is unanswered', async () => {
    const [a, b] = souls as [TestSoul, TestSoul];
    execFileSync('nsenter', ['-t', String(a.run.child.pid), '-u', 'hostname', `${renamed}-2`]);
    execFileSync('nsenter', ['-t', String(b.run.child.pid), '-u', 'hostname', `${renamed}-b`]);
    b.run.child.kill('SIGSTOP');
    try {
      const out = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(
          process.execPath,
          [
            path.join(repoRoot(), 'bin', 'keeperctl'),
            'souls',
            'list',
            '--coven',
            'fresh',
            '--refresh',
            '--fields',
            'hostname',
          ],
          { env: { PATH: process.env['PATH'], HOME: root, KEEPER_URL: k.baseUrl, KEEPER_TOKEN: k.adminToken } },
        );
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
      });
      assert.equal(out.code, 0, out.stderr + out.stdout);
      const esc = (s: string) => s.replaceAll('.', '\\.');
      assert.match(out.stdout, new RegExp(`^${esc(a.sid)}\\s+${renamed}-2\\s+\\d+s$`, 'm'));
      // The stopped soul did not answer: its stored name is shown, and the command says so.
      assert.match(out.stdout, new RegExp(`^${esc(b.sid)}\\s+${esc(b.sid)}\\s+\\d+s$`, 'm'));
      assert.match(
        out.stdout,
        new RegExp(`^refreshed: 1 of 2 connected souls answered \\(stored facts shown for ${esc(b.sid)}\\)$`, 'm'),
      );
    } finally {
      b.run.child.kill('SIGCONT');
    }
  });
});
