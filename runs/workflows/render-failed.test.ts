import assert from 'node:assert/strict';
import { renderFailedReason } from './render-failed';

describe('renderFailedReason: what a run or a plan says when its render failed', () => {
  it('names the error count, what the failure meant and the keeper that rendered', () => {
    assert.equal(
      renderFailedReason({ ok: false, errorCount: 2, kid: 'k-east' }, '; nothing was applied'),
      'render failed with 2 error(s); nothing was applied (rendered on keeper k-east)',
    );
    assert.equal(
      renderFailedReason({ ok: false, errorCount: 1, kid: 'k-east' }),
      'render failed with 1 error(s) (rendered on keeper k-east)',
    );
  });

  it('names no keeper for a run recorded before render said which keeper it was', () => {
    assert.equal(
      renderFailedReason({ ok: false, errorCount: 3 }, '; nothing was applied'),
      'render failed with 3 error(s); nothing was applied',
    );
  });
});
