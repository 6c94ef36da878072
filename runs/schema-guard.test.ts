// The guard between code and state versions: which runs are refused and what the refusal tells the operator.
import assert from 'node:assert/strict';
import { schemaMismatch } from './schema-guard';

const loaded = (v: number) => ({ commit: 'a'.repeat(40), stateSchemaVersion: v });

describe('schemaMismatch', () => {
  it('lets a first run (no committed state yet) and a matching version through', () => {
    assert.equal(schemaMismatch({ name: 'web', state_schema_version: null }, 'v2', loaded(2)), undefined);
    assert.equal(schemaMismatch({ name: 'web', state_schema_version: 2 }, 'v2', loaded(2)), undefined);
  });

  it('refuses new code on old state with the upgrade to run first', () => {
    const why = schemaMismatch({ name: 'web', state_schema_version: 1 }, 'v2', loaded(2));
    assert.equal(
      why,
      "incarnation web's committed state is at state_schema_version 1, but version v2 (commit aaaaaaaaaaaa) expects 2: " +
        'upgrade it first: POST /v1/incarnations/web/upgrade {"version": "v2"}',
    );
  });

  it('refuses old code on migrated state, saying migrations are forward only', () => {
    assert.match(
      schemaMismatch({ name: 'web', state_schema_version: 3 }, 'v1', loaded(1)) ?? '',
      /state_schema_version 3, but version v1 .* expects 1: state migrations are forward only/,
    );
  });
});
