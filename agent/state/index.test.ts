import assert from 'node:assert/strict';
import * as state from './index';

describe('agent/state public entry point', () => {
  it('exposes the applier, the ledger and the three core modules', () => {
    assert.equal(typeof state.applyStep, 'function');
    assert.equal(typeof state.Ledger.open, 'function');
    const registry = state.createStateRegistry({ facts: {}, runner: state.createProcessRunner() });
    assert.deepEqual(registry.names(), ['core.file.present', 'core.file.rendered', 'core.pkg.installed']);
    assert.equal(registry.get('toString'), undefined);
  });
});
