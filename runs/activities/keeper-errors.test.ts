// Every activity error names the keeper that ran it (keeper-errors.ts, issue 33): what the workflow
// decides on (failure type, retryability, class) is kept; cancellations pass untouched.
import assert from 'node:assert/strict';
import path from 'node:path';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { namingKeeper, relativeStack, withKeeperErrors } from './keeper-errors';

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

  it('leaves no absolute path of the keeper host in a thrown error’s stack or its cause’s; the message stays', async () => {
    const failing = withKeeperErrors('k-east', {
      async nested() {
        throw new Error('render failed at /srv/scenario/main.yml', { cause: new Error('inner') });
      },
    });
    await assert.rejects(failing.nested(), (err: Error) => {
      assert.equal(err.message, 'render failed at /srv/scenario/main.yml (on keeper k-east)');
      const root = path.resolve(__dirname, '..', '..', '..');
      for (const stack of [err.stack!, (err.cause as Error).stack!]) {
        const frames = stack.split('\n').filter((l) => /^\s+at /.test(l));
        assert.ok(frames.length > 0, stack);
        for (const f of frames) assert.ok(!/[\s(](file:\/\/)?\//.test(f), `an absolute path in ${f}`);
        assert.ok(!stack.includes(root), stack);
      }
      assert.match(err.stack!, /^\s+at .*\(dist\/runs\/activities\/keeper-errors\.test\.js:\d+:\d+\)$/m);
      return true;
    });
  });

  it('relativises frames under the install root and keeps only the file name of other absolute paths', () => {
    const stack = [
      'Error: boom /etc/x',
      '    at render (/opt/keeper/dist/runs/activities/render.js:10:3)',
      '    at file:///opt/keeper/dist/x.js:1:2',
      '    at Module.load (/usr/lib/node_modules/thing/index.js:4:5)',
      '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
    ].join('\n');
    assert.equal(
      relativeStack(stack, '/opt/keeper'),
      [
        'Error: boom /etc/x',
        '    at render (dist/runs/activities/render.js:10:3)',
        '    at dist/x.js:1:2',
        '    at Module.load (<host>/index.js:4:5)',
        '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
      ].join('\n'),
    );
  });
});
