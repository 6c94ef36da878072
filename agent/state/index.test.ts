import assert from 'node:assert/strict';
import { MODULES } from '../../scenario/modules';
import * as state from './index';

describe('agent/state public entry point', () => {
  it('exposes the applier, the ledger and a handler for every module contract render and soul-lint know', () => {
    assert.equal(typeof state.applyStep, 'function');
    assert.equal(typeof state.Ledger.open, 'function');
    const registry = state.createStateRegistry({ facts: {}, runner: state.createProcessRunner() });
    assert.deepEqual(registry.names(), [...MODULES.keys()].sort());
    assert.ok(registry.names().includes('core.service.reloaded') && registry.names().includes('core.cmd.run'));
    assert.equal(registry.get('toString'), undefined);
  });
});
