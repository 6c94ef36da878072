import * as assert from 'node:assert/strict';
import { applyMigrations } from './migrations';
import { loadServiceFromDir } from './load/dir';
import { fixtureService } from '../test/lint/paths';
import { cleanupTempServices, tempService } from '../test/lint/temp-service';

describe('state migrations', function () {
  const motd = loadServiceFromDir(fixtureService('motd'));
  after(cleanupTempServices);

  it('applies migrations in order, each reading the state left by the previous one', function () {
    const r = applyMigrations(motd, { message: 'hello' }, 1, 3);
    assert.ok(r.ok);
    assert.deepEqual(r.applied, [2, 3]);
    assert.deepEqual(r.state, { message: 'hello', motd: { message: 'hello' }, revision: 0 });
  });

  it('applies only the steps above the current version', function () {
    const r = applyMigrations(motd, { revision: 7 }, 2, 3);
    assert.ok(r.ok);
    assert.deepEqual(r.applied, [3]);
    assert.deepEqual(r.state, { revision: 7 });
  });

  it('moves and unsets keys: a renamed key keeps its value, a dropped key is gone, sets read the state before', function () {
    const svc = loadServiceFromDir(
      tempService({
        'service.yml': 'name: demo\nstate_schema_version: 3\n',
        'migrations/2.yml':
          'state_changes:\n  moves:\n    message: motd.message\n    absent: elsewhere\n  unsets: [legacy.port]\n' +
          '  sets:\n    motd.was: "${state.message}"\n',
        'migrations/3.yml': 'state_changes:\n  unsets: [legacy]\n',
      }),
    );
    assert.deepEqual(svc.errors, []);
    const state = { message: 'hello', legacy: { port: 80, host: 'a' }, keep: 1 };
    const two = applyMigrations(svc, state, 1, 2);
    assert.ok(two.ok);
    assert.deepEqual(two.state, { motd: { message: 'hello', was: 'hello' }, legacy: { host: 'a' }, keep: 1 });
    assert.ok(!('elsewhere' in two.state), 'a key that is not there moves nothing');
    const three = applyMigrations(svc, state, 1, 3);
    assert.ok(three.ok);
    assert.deepEqual(three.state, { motd: { message: 'hello', was: 'hello' }, keep: 1 });
    assert.deepEqual(state, { message: 'hello', legacy: { port: 80, host: 'a' }, keep: 1 }, 'the input is not changed');
  });

  it('is forward only and bounded by state_schema_version', function () {
    const down = applyMigrations(motd, {}, 3, 2);
    assert.ok(!down.ok && /forward only/.test(down.errors[0]!.message));
    const above = applyMigrations(motd, {}, 1, 4);
    assert.ok(!above.ok && /above the service's state_schema_version 3/.test(above.errors[0]!.message));
  });
});
