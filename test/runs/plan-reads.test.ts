// A reviewed plan survives facts its render never read (issue 47, docs/plans.md "Apply exactly the
// plan"). A real keeper and two real souls, each in its own UTS namespace (test/agents/harness.ts):
// a host name changed under a soul and fetched with a fact refresh is a fact that really changed.
// The scenario reads `soulprint.self.hostname` only when `input.by_host` is true, so the same
// service makes a plan that never reads it and one that does. The stale host is the second in SID
// order, so a per-host check would have applied the first before refusing it: the 409 comes before
// anything is recorded or sent, and no host changes.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { TestKeeper } from '../support/keeper';
import { api, gitRepoFrom, settled, startRunKeeper, startSouls, stopRunRig, tempDir, type TestSoul } from './keeper';

const SCENARIO = `input:
  root: {type: string}
  greeting: {type: string, default: hello}
  by_host: {type: boolean, default: false}
tasks:
  - name: greeting
    module: core.file.present
    params:
      path: "\${input.root}/\${soulprint.self.fqdn}/greeting"
      content: "\${input.by_host ? soulprint.self.hostname : input.greeting}\\n"
      mode: "0644"
`;

describe('plan staleness: judged on the facts its render read', function () {
  this.timeout(240_000);
  let k: TestKeeper;
  let root: string;
  let souls: TestSoul[] = [];

  const file = (s: TestSoul) => path.join(root, s.sid, 'greeting');
  const read = (s: TestSoul) => fs.readFileSync(file(s), 'utf8');
  const plan = async (input: Record<string, unknown>) => {
    const r = await api(k, 'POST', '/v1/incarnations/reads/plans', { operation: 'update', input: { root, ...input } });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const got = await api(k, 'GET', `${r.body.plan}?wait=60s`);
    assert.equal(got.status, 200, JSON.stringify(got.body));
    assert.equal(got.body.status, 'ready', JSON.stringify(got.body));
    return got.body;
  };
  /** The soul's host name changed under it, and its facts fetched now (a soul reports them a minute later otherwise). */
  const rename = async (s: TestSoul, name: string) => {
    execFileSync('nsenter', ['-t', String(s.run.child.pid), '-u', 'hostname', name]);
    const r = await api(k, 'GET', '/v1/souls?coven=reads&refresh=true&fields=hostname');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const stored = await api(k, 'GET', '/v1/souls?coven=reads&fields=hostname');
    assert.equal(stored.body.items.find((x: any) => x.sid === s.sid).facts.hostname, name, 'the new fact is stored');
  };
  const runs = async () => (await api(k, 'GET', '/v1/incarnations/reads/runs')).body.items.length;

  before(async () => {
    root = tempDir('plan-reads-');
    const src = path.join(root, 'src');
    for (const op of ['create', 'update']) {
      fs.mkdirSync(path.join(src, 'scenario', op), { recursive: true });
      fs.writeFileSync(path.join(src, 'scenario', op, 'main.yml'), SCENARIO);
    }
    fs.writeFileSync(path.join(src, 'service.yml'), 'name: reads\nstate_schema_version: 1\n');
    const url = gitRepoFrom(src, path.join(root, 'reads.git'), 'v1');
    k = await startRunKeeper();
    souls = await startSouls(k, path.join(root, 'souls'), [['reads'], ['reads']]);
    souls.sort((a, b) => a.sid.localeCompare(b.sid));
    assert.equal((await api(k, 'POST', '/v1/services', { name: 'reads', git: url, ref: 'v1' })).status, 201);
    const c = await api(k, 'POST', '/v1/incarnations', {
      name: 'reads',
      service: 'reads',
      covens: ['reads'],
      input: { root, greeting: 'one' },
    });
    assert.equal(c.status, 202, JSON.stringify(c.body));
    assert.equal((await settled(k, 'reads')).status, 'ready');
  });
  after(async () => {
    await stopRunRig({ souls, k, root });
  });

  it('a fact the scenario never read changes between plan and apply: the plan applies', async () => {
    const [a, b] = souls as [TestSoul, TestSoul];
    const p = await plan({ greeting: 'two' });
    assert.equal(p.summary.would_change, 2);
    for (const h of p.hosts) assert.deepEqual(h.facts_read, ['fqdn'], 'the plan says what its render read');
    await rename(b, `renamed-${process.pid}`);
    const run = await api(k, 'POST', '/v1/incarnations/reads/runs', { plan_id: p.plan_id });
    assert.equal(run.status, 202, JSON.stringify(run.body));
    assert.equal((await settled(k, 'reads')).status, 'ready');
    assert.equal(read(a), 'two\n');
    assert.equal(read(b), 'two\n');
  });

  it('a fact it read changes on the second host: 409 naming the host and the fact, and no host changed', async () => {
    const [a, b] = souls as [TestSoul, TestSoul];
    const p = await plan({ by_host: true });
    assert.deepEqual(
      p.hosts.map((h: any) => h.facts_read),
      [
        ['fqdn', 'hostname'],
        ['fqdn', 'hostname'],
      ],
    );
    const before = await runs();
    await rename(b, `again-${process.pid}`);
    const run = await api(k, 'POST', '/v1/incarnations/reads/runs', { plan_id: p.plan_id });
    assert.equal(run.status, 409, JSON.stringify(run.body));
    const text = JSON.stringify(run.body);
    assert.match(
      text,
      new RegExp(
        `is stale: facts its render read have changed since: host ${b.sid}: fact hostname: the plan rendered with \\\\"renamed-${process.pid}\\\\", now \\\\"again-${process.pid}\\\\"; nothing was applied on any host`,
      ),
    );
    assert.doesNotMatch(text, new RegExp(`host ${a.sid}`), 'the unchanged host is not named');
    // Nothing recorded, nothing sent: both hosts as the last run left them, the incarnation ready.
    assert.equal(await runs(), before);
    assert.equal(read(a), 'two\n');
    assert.equal(read(b), 'two\n');
    const inc = (await api(k, 'GET', '/v1/incarnations/reads')).body;
    assert.equal(inc.status, 'ready');

    // A fresh plan sees the host as it is now, and applies.
    const fresh = await plan({ by_host: true });
    const again = await api(k, 'POST', '/v1/incarnations/reads/runs', { plan_id: fresh.plan_id });
    assert.equal(again.status, 202, JSON.stringify(again.body));
    assert.equal((await settled(k, 'reads')).status, 'ready');
    assert.equal(read(b), `again-${process.pid}\n`);
    const names = (await api(k, 'GET', '/v1/souls?coven=reads&fields=hostname')).body.items;
    assert.equal(
      read(a),
      `${names.find((x: any) => x.sid === a.sid).facts.hostname}\n`,
      'the first host has its own name',
    );
  });
});
