// The run path with the real scenario engine: the example service test/fixtures/services/motd made
// into a local git repository, registered by file:// URL at a tag, created on one soul.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../support/repo';
import type { TestKeeper } from '../support/keeper';
import { api, gitRepoFrom, settled, startRunKeeper, startSouls, stopRunRig, tempDir, type TestSoul } from './keeper';

describe('incarnation runs with the real scenario engine (motd example service from git)', function () {
  this.timeout(300_000);
  let k: TestKeeper;
  let root: string;
  let souls: TestSoul[];

  before(async () => {
    root = tempDir('runs-engine-');
    const url = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'motd'),
      path.join(root, 'motd.git'),
      'v3',
    );
    k = await startRunKeeper();
    souls = await startSouls(k, path.join(root, 'souls'), [['edge']]);
    const r = await api(k, 'POST', '/v1/services', { name: 'motd', git: url, ref: 'v3' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  });
  after(() => stopRunRig({ souls, k, root }));

  it('renders, applies and commits: ready with the rendered file on disk; the same run again changes nothing', async () => {
    const out = path.join(root, 'out');
    const input = { root: out, message: 'Hello from the test', package: 'git' };
    const r = await api(k, 'POST', '/v1/incarnations', { name: 'motd-edge', service: 'motd', covens: ['edge'], input });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const inc = await settled(k, 'motd-edge');
    const first = (await api(k, 'GET', `/v1/incarnations/motd-edge/runs/${r.body.apply_id}`)).body;
    assert.equal(inc.status, 'ready', JSON.stringify(first.hosts));
    assert.equal(inc.state.message, 'Hello from the test');
    assert.equal(inc.state_schema_version, 3);
    const motd = fs.readFileSync(path.join(out, 'etc', 'motd'), 'utf8');
    assert.match(motd, /Hello from the test/);
    assert.ok(motd.includes(souls[0]!.sid), 'the template saw soulprint.self.fqdn');
    assert.ok(fs.existsSync(path.join(out, 'etc', 'motd.d', 'keeper')));

    const again = await api(k, 'POST', '/v1/incarnations/motd-edge/runs', { operation: 'create', input });
    assert.equal(again.status, 202);
    assert.equal((await settled(k, 'motd-edge')).status, 'ready');
    const rep = (await api(k, 'GET', `/v1/incarnations/motd-edge/runs/${again.body.apply_id}`)).body;
    assert.equal(rep.summary.changed, false);
    assert.deepEqual(
      rep.hosts[0].steps.map((s: any) => s.status),
      ['ok', 'ok', 'skipped'],
    );
  });
});
