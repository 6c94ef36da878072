import * as assert from 'node:assert/strict';
import { applyMigrations } from './migrations';
import { loadServiceFromDir } from './load/dir';
import { fixtureService } from '../test/lint/paths';

describe('state migrations', function () {
  const motd = loadServiceFromDir(fixtureService('motd'));

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

  it('is forward only and bounded by state_schema_version', function () {
    const down = applyMigrations(motd, {}, 3, 2);
    assert.ok(!down.ok && /forward only/.test(down.errors[0]!.message));
    const above = applyMigrations(motd, {}, 1, 4);
    assert.ok(!above.ok && /above the service's state_schema_version 3/.test(above.errors[0]!.message));
  });
});
