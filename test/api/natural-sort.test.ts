// Names with numbers read naturally (issue 35): host2 before host10, in the lists and across their
// keyset pages (the keeper_natural collation in ORDER BY and in the cursor comparison), and in run reports.
import assert from 'node:assert/strict';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { clientFor } from './helpers';

describe('Operator API: natural order of names', function () {
  this.timeout(60_000);
  let tk: TestKeeper;
  let api: ReturnType<typeof clientFor>;
  const sids = Array.from({ length: 23 }, (_, i) => `host${i}.nat.example.com`);

  before(async () => {
    tk = await startTestKeeper();
    api = clientFor(tk);
    for (const sid of [...sids].reverse())
      assert.equal(
        (await api('POST', '/v1/souls', { body: { sid, transport: 'agent', covens: ['web'] } })).status,
        201,
      );
  });
  after(async () => {
    await tk?.stop();
  });

  async function walk(path: string, key: string): Promise<string[][]> {
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const a = await api('GET', `${path}?limit=10${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      assert.equal(a.status, 200, a.text);
      pages.push(a.body.items.map((i: Record<string, string>) => i[key]));
      cursor = a.body.next_cursor;
    } while (cursor !== null);
    return pages;
  }

  it('pages souls in natural SID order, no soul lost or repeated between pages', async () => {
    const pages = await walk('/v1/souls', 'sid');
    assert.deepEqual(
      pages.map((p) => p.length),
      [10, 10, 3],
    );
    assert.deepEqual(pages.flat(), sids, 'host0, host1, host2, ..., host9, host10, ...');
  });

  it("pages incarnations in natural name order and lists a run report's hosts the same way", async () => {
    const db = tk.keeper.runtime.db;
    await db('services').insert({ name: 'svc', git: 'file:///srv/svc.git', ref: 'v1' });
    const names = Array.from({ length: 12 }, (_, i) => `app${i + 1}`);
    await db('incarnations').insert(names.map((name) => ({ name, service: 'svc', covens: ['web'], status: 'ready' })));
    assert.deepEqual((await walk('/v1/incarnations', 'name')).flat(), names);

    await db('incarnation_runs').insert({
      apply_id: 'app1.apply.nat',
      incarnation: 'app1',
      operation: 'apply',
      status: 'succeeded',
      phase: 'done',
      finished_at: new Date(),
    });
    await db('run_hosts').insert(sids.map((sid) => ({ apply_id: 'app1.apply.nat', sid, status: 'ok' })));
    const run = await api('GET', '/v1/incarnations/app1/runs/app1.apply.nat');
    assert.equal(run.status, 200, run.text);
    assert.deepEqual(
      run.body.hosts.map((h: { sid: string }) => h.sid),
      sids,
    );
  });
});
