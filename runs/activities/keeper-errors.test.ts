// Every activity error names the keeper that ran it (keeper-errors.ts, issue 33): what the workflow
// decides on (failure type, retryability, class) is kept; cancellations pass untouched.
import assert from 'node:assert/strict';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { namingKeeper, withKeeperErrors } from './keeper-errors';

describe('activity errors name the keeper', () => {
  const acts = withKeeperErrors('k-east', {
    async ok(n: number) {
      return n + 1;
    },
    async plain() {
      throw new Error('git clone: the repository was not found');
    },
    async typed() {
      throw ApplicationFailure.nonRetryable('run r-1 no longer exists', 'RunGone');
    },
    async cancelled() {
      throw new CancelledFailure('cancelled');
    },
  });

  it('appends the kid to a thrown error, once', async () => {
    await assert.rejects(acts.plain(), (err: Error) => {
      assert.equal(err.message, 'git clone: the repository was not found (on keeper k-east)');
      assert.equal((namingKeeper(err, 'k-east') as Error).message, err.message, 'not named twice');
      return true;
    });
  });

  it('keeps an ApplicationFailure’s type and retryability, so the workflow decides as before', async () => {
    await assert.rejects(acts.typed(), (err: ApplicationFailure) => {
      assert.ok(err instanceof ApplicationFailure);
      assert.equal(err.type, 'RunGone');
      assert.equal(err.nonRetryable, true);
      assert.equal(err.message, 'run r-1 no longer exists (on keeper k-east)');
      return true;
    });
  });

  it('passes results through and leaves a cancellation as it is', async () => {
    assert.equal(await acts.ok(1), 2);
    await assert.rejects(
      acts.cancelled(),
      (err: Error) => err instanceof CancelledFailure && err.message === 'cancelled',
    );
  });

  it('names the keeper for a thrown non-error too', () => {
    assert.equal((namingKeeper('boom', 'k-east') as Error).message, 'boom (on keeper k-east)');
  });
});
