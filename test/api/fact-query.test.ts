// Fact queries (issue 34): GET /v1/souls?where=&fields=&count_by= and `keeperctl souls list --where`,
// answered from the soulprints the registry holds. The souls here have no host behind them at all
// (their facts are stored as a stream's Hello would store them), so any answer proves no host was asked.
import assert from 'node:assert/strict';
import { markConnected, registerSoul } from '../../db/repos/souls';
import { runKeeperctl } from '../support/keeperctl-process';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { assertProblem, clientFor } from './helpers';

const fact = (sid: string, os_release: string, architecture: string) => ({
  fqdn: sid,
  hostname: sid.split('.')[0],
  os_family: 'debian',
  os_name: 'Debian GNU/Linux',
  os_release,
  architecture,
  cpu_count: 2,
  memory_bytes: 1 << 30,
  addresses: ['10.0.0.1'],
  soul_version: '1.0.0',
});

describe('Fact queries over stored soulprints', function () {
  this.timeout(60_000);
  let tk: TestKeeper;
  let api: ReturnType<typeof clientFor>;

  before(async () => {
    tk = await startTestKeeper();
    api = clientFor(tk);
    const db = tk.keeper.runtime.db;
    const hosts: [string, string[], string, string][] = [
      ['web-1.fq.example.com', ['web'], '12', 'x86_64'],
      ['web-2.fq.example.com', ['web'], '12', 'x86_64'],
      ['web-3.fq.example.com', ['web'], '11', 'aarch64'],
      ['db-1.fq.example.com', ['db'], '12', 'aarch64'],
    ];
    for (const [sid, covens, rel, arch] of hosts) {
      await registerSoul(db, { sid, transport: 'agent', covens }, { tokenTtlMs: 60_000 });
      await markConnected(db, sid, 'k-test', fact(sid, rel, arch), new Date(Date.now() - 90_000));
    }
    await registerSoul(
      db,
      { sid: 'new-1.fq.example.com', transport: 'agent', covens: ['web'] },
      { tokenTtlMs: 60_000 },
    );
  });
  after(async () => {
    await tk?.stop();
  });

  it('answers a where over soulprint.self with the projected facts and their age', async () => {
    const r = await api(
      'GET',
      `/v1/souls?where=${encodeURIComponent('soulprint.self.os_release == "12" && "web" in soulprint.self.covens')}&fields=os_release,architecture`,
    );
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(
      r.body.items.map((s: any) => s.sid),
      ['web-1.fq.example.com', 'web-2.fq.example.com'],
    );
    assert.deepEqual(r.body.items[0].facts, { os_release: '12', architecture: 'x86_64' });
    assert.ok(r.body.items[0].soulprint_age_s >= 90, `age ${r.body.items[0].soulprint_age_s}`);
  });

  it('counts by a fact across every match, a soul without facts counted as null and never matched', async () => {
    const r = await api('GET', '/v1/souls?count_by=os_release&limit=1');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.items.length, 1, 'the page is still one');
    assert.deepEqual(r.body.count_by, {
      field: 'os_release',
      total: 5,
      values: [
        { value: '12', count: 3 },
        { value: '11', count: 1 },
        { value: null, count: 1 },
      ],
    });
    // The fuzzer's counterexample (a 500 once): an inherited name is a fact no soul has.
    const inherited = await api('GET', '/v1/souls?count_by=constructor&fields=toString');
    assert.equal(inherited.status, 200, inherited.text);
    assert.deepEqual(inherited.body.count_by.values, [{ value: null, count: 5 }]);
    assert.deepEqual(inherited.body.items[0].facts, { toString: null });
    const arch = await api(
      'GET',
      `/v1/souls?coven=web&where=${encodeURIComponent('soulprint.self.architecture == "aarch64"')}`,
    );
    assert.deepEqual(
      arch.body.items.map((s: any) => s.sid),
      ['web-3.fq.example.com'],
      'the pending soul has no facts: no match, no error',
    );
  });

  it('refuses a bad expression with a 400 naming where, and a non-boolean one', async () => {
    const bad = await api('GET', `/v1/souls?where=${encodeURIComponent('soulprint.self.os_release ==')}`);
    assertProblem(bad, 400, /where/);
    assert.equal(bad.body.errors[0].path, '/query/where');
    const unknown = await api('GET', `/v1/souls?where=${encodeURIComponent('input.x == 1')}`);
    assertProblem(unknown, 400, /where/);
    assertProblem(
      await api('GET', `/v1/souls?where=${encodeURIComponent('soulprint.self.os_release')}`),
      400,
      /where: must be a boolean/,
    );
  });

  it('keeperctl souls list --where --fields --count-by prints the facts and the counts', async () => {
    const ctl = (args: string[]) =>
      runKeeperctl(args, {
        PATH: process.env['PATH'],
        HOME: '/nonexistent',
        KEEPER_URL: tk.baseUrl,
        KEEPER_TOKEN: tk.adminToken,
      });
    const r = await ctl([
      'souls',
      'list',
      '--where',
      'soulprint.self.os_release == "12"',
      '--fields',
      'os_release,architecture',
      '--count-by',
      'architecture',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^SID\s+OS_RELEASE\s+ARCHITECTURE\s+AGE$/m);
    assert.match(r.stdout, /^db-1\.fq\.example\.com\s+12\s+aarch64\s+\d+s$/m);
    assert.match(r.stdout, /^x86_64\s+2$/m);
    assert.match(r.stdout, /^aarch64\s+1$/m);
    assert.match(r.stdout, /^total 3$/m);
    const bad = await ctl(['souls', 'list', '--where', 'soulprint.self.os_release ==']);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /where/);
  });
});
