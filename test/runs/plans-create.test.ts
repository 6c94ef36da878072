// The plan of a create (docs/plans.md), on the real stack with real souls (plans-rig.ts): it makes
// nothing until it is applied, and the run that applies it makes the incarnation with exactly its steps.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { TestKeeper } from '../support/keeper';
import { api, settled, type TestSoul } from './keeper';
import { plansRig } from './plans-rig';

describe('plans: the plan of a create', function () {
  this.timeout(300_000);
  const { state } = plansRig();
  let k: TestKeeper;
  let root: string;
  let souls: TestSoul[] = [];
  before(() => {
    ({ k, root, souls } = state);
  });

  it('the plan of a create: nothing exists until it is applied, then the incarnation is made with exactly its steps', async () => {
    const [a] = souls as [TestSoul];
    const dir = path.join(root, 'created');
    const missing = await api(k, 'POST', '/v1/incarnations/fresh/plans', { operation: 'update' });
    assert.equal(missing.status, 404);
    assert.match(
      missing.body.detail,
      /to plan its create, send operation "create" with service and covens \(missing: service, covens\)/,
    );
    const p = await api(k, 'POST', '/v1/incarnations/fresh/plans', {
      operation: 'create',
      service: 'plan',
      covens: ['pkg'],
      input: { root: dir, port: 81 },
    });
    assert.equal(p.status, 202, JSON.stringify(p.body));
    const plan = (await api(k, 'GET', `${p.body.plan}?wait=60s`)).body;
    assert.equal(plan.status, 'ready', JSON.stringify(plan));
    assert.deepEqual(
      plan.hosts.map((h: any) => [h.sid, h.status]),
      [[a.sid, 'changed']],
    );
    const conf = plan.hosts[0].steps[0];
    assert.equal(conf.diff.created, true);
    assert.match(
      conf.diff.content.unified,
      /^@@ -0,0 \+1,4 @@\n\+# managed by keeper\n\+name=app\n\+port=81\n\+workers=4\n$/m,
    );
    assert.equal((await api(k, 'GET', '/v1/incarnations/fresh')).status, 404, 'a plan creates nothing');
    assert.equal(fs.existsSync(path.join(dir, a.sid)), false);
    assert.deepEqual(
      (await api(k, 'GET', '/v1/incarnations/fresh/plans')).body.items.map((x: any) => x.plan_id),
      [plan.plan_id],
    );
    const exists = await api(k, 'POST', '/v1/incarnations/shop/plans', { operation: 'update', service: 'plan' });
    assert.equal(exists.status, 400);
    assert.deepEqual(exists.body.errors, [{ path: '/body/service', message: 'only for the plan of a create' }]);

    const run = await api(k, 'POST', '/v1/incarnations/fresh/runs', { plan_id: plan.plan_id });
    assert.equal(run.status, 202, JSON.stringify(run.body));
    const inc = await settled(k, 'fresh');
    assert.deepEqual([inc.status, inc.service, inc.covens, inc.state.port], ['ready', 'plan', ['pkg'], 81]);
    assert.equal(
      fs.readFileSync(path.join(dir, a.sid, 'app.conf'), 'utf8'),
      '# managed by keeper\nname=app\nport=81\nworkers=4\n',
    );
    assert.equal((await api(k, 'GET', run.body.run)).body.plan_id, plan.plan_id);
  });
});
