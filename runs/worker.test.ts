import assert from 'node:assert/strict';
import type { SharedActivityDeps } from './activities/deps';
import { MAX_CACHED_WORKFLOWS, sharedWorkerOptions } from './worker';

describe('the keeper’s shared Temporal worker', () => {
  const options = sharedWorkerOptions(
    { namespace: 'default', taskQueue: 'keeper', kid: 'k1', shared: {} as SharedActivityDeps },
    { code: '' },
  );

  it('keeps at most 500 workflow runs in its cache, whatever the heap limit of the keeper', () => {
    assert.equal(MAX_CACHED_WORKFLOWS, 500);
    assert.equal(options.maxCachedWorkflows, 500);
  });

  it('polls the shared queue with the run workflows and the shared activities', () => {
    assert.equal(options.taskQueue, 'keeper');
    assert.equal(options.identity, 'keeper-k1-shared');
    assert.ok(Object.keys(options.activities).length > 0);
  });
});
