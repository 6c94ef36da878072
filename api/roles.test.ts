import assert from 'node:assert/strict';
import { EXECUTION_ROLES } from '../platform/config/schema';
import { EXECUTION_MODULES, ROLE_NAMES, executionModulesOf } from './roles';

describe('execution allow-lists per role', () => {
  it('the config accepts exactly the built-in roles as keys of executions.modules', () => {
    assert.deepEqual([...EXECUTION_ROLES].sort(), [...ROLE_NAMES].sort());
  });

  it('uses the built-in list for a role the config does not name, and the configured one for a role it names', () => {
    assert.deepEqual(executionModulesOf('responder'), EXECUTION_MODULES['responder']);
    assert.ok(!executionModulesOf('responder').includes('core.cmd.run'));
    assert.deepEqual(executionModulesOf('responder', { responder: ['core.cmd.run'] }), ['core.cmd.run']);
    assert.deepEqual(executionModulesOf('cluster-admin', { responder: ['core.cmd.run'] }), ['*']);
    assert.deepEqual(executionModulesOf('cluster-admin', { 'cluster-admin': [] }), []);
    assert.deepEqual(executionModulesOf('operator'), [], 'operator runs none unless the config says so');
    assert.deepEqual(executionModulesOf('operator', { operator: ['core.service.restarted'] }), [
      'core.service.restarted',
    ]);
    assert.deepEqual(executionModulesOf('constructor', {}), [], 'no inherited property is a role');
  });
});
