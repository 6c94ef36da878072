// The wait of a run recorded behind a converge run (db/repos/run-queue.ts): an operator's run and an
// upgrade both wait here, so both wait the same way. It lasts as long as the converge run: the
// activity is restarted after a day, or after its worker is lost: its heartbeat (every 250 ms,
// sent at most every 8 s by the SDK) stops, and 10 s later, as for dispatch, another worker takes it.
// Activity options are not part of a workflow's replay, so running histories keep working.
import { proxyActivities } from '@temporalio/workflow';
import type { SharedActivities } from '../activities/shared';

const waiting = proxyActivities<SharedActivities>({
  startToCloseTimeout: '1d',
  heartbeatTimeout: '10s',
  retry: { initialInterval: '1s', maximumInterval: '10s', nonRetryableErrorTypes: ['RunGone', 'NotLockHolder'] },
});

/** 'ended' when the converge run left the incarnation locked (this run must not go on), else its turn came. */
export function awaitTurn(applyId: string): ReturnType<SharedActivities['awaitTurn']> {
  return waiting.awaitTurn({ applyId });
}
