// The failure summary keeperctl prints after a failed run: the failed_when verdict the keeper
// recorded under the module's answer is shown, not cut off at the first line.
import assert from 'node:assert/strict';
import { failureLines, type RunReport } from './follow';

describe('keeperctl failure summary', () => {
  it('shows the failed_when reason of a failed step', () => {
    const r: RunReport = {
      apply_id: 'shop.update.1',
      incarnation: 'shop',
      operation: 'update',
      status: 'failed',
      phase: 'done',
      error: '1 host(s) failed',
      render_errors: null,
      hosts: [
        {
          sid: 'web-1',
          status: 'failed',
          reason: null,
          steps: [
            {
              index: 0,
              name: 'health',
              status: 'failed',
              changed: false,
              output: 'ran /bin/true\nfailed_when: `result.rc == 0` is true (result.rc = 0)',
            },
          ],
        },
      ],
    };
    assert.deepEqual(failureLines(r), [
      'error: 1 host(s) failed',
      'web-1 step 0 (health): failed: ran /bin/true',
      '  failed_when: `result.rc == 0` is true (result.rc = 0)',
    ]);
  });
});
