// The CEL evaluation budget on a real keeper (its own process) and a real soul: the review's bomb, a
// comprehension nested three deep over a 150-element input list, fails the render naming the budget,
// the expression, file and line, nothing reaches the host, and the keeper answers /readyz throughout.
// The same scenario over a 10-element list renders and applies.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../support/repo';
import type { InitializedKeeper } from '../support/keeper';
import {
  api,
  gitRepoFrom,
  initRunKeeper,
  settled,
  spawnKeeper,
  startSouls,
  stopRunRig,
  tempDir,
  type KeeperProcess,
  type TestSoul,
} from './keeper';

describe('CEL budget: the comprehension bomb fails the render, the keeper stays up', function () {
  this.timeout(180_000);
  let k: InitializedKeeper;
  let proc: KeeperProcess;
  let root: string;
  let souls: TestSoul[];

  before(async () => {
    root = tempDir('cel-budget-');
    k = await initRunKeeper();
    proc = await spawnKeeper(k);
    souls = await startSouls(k, path.join(root, 'souls'), [['web']]);
    const url = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'cel-bomb'),
      path.join(root, 'cel-bomb.git'),
      'v1',
    );
    const r = await api(k, 'POST', '/v1/services', { name: 'cel-bomb', git: url, ref: 'v1' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  });
  after(() => stopRunRig({ souls, k, keeper: proc, root }));

  it('a render with the bomb fails on its budget, naming the expression, file and line, while /readyz keeps answering', async () => {
    const l = Array.from({ length: 150 }, (_, i) => i);
    const readyz: number[] = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        readyz.push((await fetch(`${k.baseUrl}/readyz`)).status);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    try {
      const r = await api(k, 'POST', '/v1/incarnations', {
        name: 'bomb',
        service: 'cel-bomb',
        covens: ['web'],
        input: { root, l },
      });
      assert.equal(r.status, 202, JSON.stringify(r.body));
      const inc = await settled(k, 'bomb');
      assert.equal(inc.status, 'error_locked');
      const rep = (await api(k, 'GET', `/v1/incarnations/bomb/runs/${r.body.apply_id}`)).body;
      assert.equal(rep.status, 'failed');
      assert.equal(rep.hosts.length, 0, 'no host was dispatched to');
      assert.equal(rep.render_errors.length, 1, JSON.stringify(rep.render_errors));
      const [e] = rep.render_errors;
      assert.equal(e.file, 'scenario/create/main.yml');
      assert.equal(e.line, 10, JSON.stringify(e));
      assert.equal(e.rule, 'SL021');
      assert.match(e.message, /CEL expression exceeded its (cost|time) budget/);
      assert.ok(e.message.includes('input.l.map(x, input.l.map(y, input.l.map(z, x + y + z))).size()'), e.message);
    } finally {
      polling = false;
      await poller;
    }
    assert.ok(readyz.length > 0);
    assert.deepEqual([...new Set(readyz)], [200], 'every /readyz during the run answered 200');
    assert.ok(!fs.existsSync(path.join(root, souls[0]!.sid, 'cube')), 'the host was never written');
  });

  it('the same scenario over a 10-element list applies (the budget refuses the bomb, not the expression)', async () => {
    const l = Array.from({ length: 10 }, (_, i) => i);
    const r = await api(k, 'POST', '/v1/incarnations', {
      name: 'small',
      service: 'cel-bomb',
      covens: ['web'],
      input: { root, l },
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const inc = await settled(k, 'small');
    assert.equal(inc.status, 'ready', JSON.stringify(inc.last_run));
    assert.equal(fs.readFileSync(path.join(root, souls[0]!.sid, 'cube'), 'utf8'), '10\n', 'the outer list of 10 lists');
  });
});
