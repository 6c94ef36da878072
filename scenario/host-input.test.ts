// Per-host input in the engine (scenario/host-input.ts, docs/runs.md "Per-host input"): the layer
// order (covens in the incarnation's order, then the sid; `null` kept so it removes), undeclared
// keys left out per operation, and render with secrets: a host's secret input is a reference,
// its plan input keeps the reference, and a value is refused naming the host.
import * as assert from 'node:assert/strict';
import { loadServiceFromDir } from './load/dir';
import { tempService, cleanupTempServices } from '../test/lint/temp-service';
import { DB_INPUT, SCENARIO, SERVICE, host, secrets } from '../test/lint/secret-service';
import { declaredOnly, hostLayer, inputFor } from './host-input';
import { renderWithSecrets } from './secrets/render';

describe('per-host input', () => {
  after(cleanupTempServices);

  it('layers covens in the incarnation order, then the sid; null removes a key', () => {
    const h = { covens: { eu: { port: 1, mode: 'a' }, blue: { port: 2 } }, hosts: { 'x.example.com': { mode: null } } };
    const layer = hostLayer(h, { sid: 'x.example.com', covens: ['blue', 'eu'] }, ['eu', 'blue']);
    assert.deepEqual(layer, { port: 2, mode: null });
    assert.deepEqual(inputFor({ port: 80, mode: 'b', root: '/' }, layer), { port: 2, root: '/' });
    assert.equal(hostLayer(h, { sid: 'y.example.com', covens: ['web'] }, ['eu', 'blue']), undefined);
    assert.deepEqual(declaredOnly({ port: 1, path: '/x' }, new Set(['path'])), { path: '/x' });
    assert.equal(declaredOnly({ port: 1 }, new Set(['path'])), undefined);
  });

  it("renders a host's secret input from its own reference, and refuses a value naming the host", () => {
    const svc = loadServiceFromDir(tempService({ 'service.yml': SERVICE, 'scenario/create/main.yml': SCENARIO }));
    const other = { sid: 'web-2.example.com', soulprint: { fqdn: 'web-2.example.com' } };
    const ref = 'secretstore:secret/keeper/services/demo/db2#password';
    const r = renderWithSecrets({
      service: svc,
      operation: 'create',
      input: DB_INPUT,
      state: {},
      hosts: [host, { ...other, input: { db_password: ref } }],
      secrets,
    });
    assert.ok(r.ok, r.ok ? '' : JSON.stringify(r.errors));
    assert.equal(r.plan.hosts[0]!.input, undefined, 'no layer: the plan input');
    assert.deepEqual(r.plan.hosts[1]!.input, { db_password: ref }, 'the host input keeps the reference');
    assert.doesNotMatch(JSON.stringify(r.plan.hosts[1]!.steps), /db2#password|db#password/);

    const bad = renderWithSecrets({
      service: svc,
      operation: 'create',
      input: DB_INPUT,
      state: {},
      hosts: [host, { ...other, input: { db_password: 'hunter2' } }],
      secrets,
    });
    assert.ok(!bad.ok);
    assert.match(bad.errors[0]!.message, /^on host web-2\.example\.com: input "db_password" is secret/);
    assert.doesNotMatch(JSON.stringify(bad.errors), /hunter2/);
  });
});
