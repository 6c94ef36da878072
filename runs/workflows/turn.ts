// The wait of a run recorded behind a converge run (db/repos/run-queue.ts): an operator's run and an
// upgrade both wait here, so both wait the same way. It lasts as long as the converge run: the
// activity is restarted after a day, or after its worker is lost (heartbeat).
import { proxyActivities } from '@temporalio/workflow';
import type { SharedActivities } from '../activities/shared';

const waiting = proxyActivities<SharedActivities>({
  startToCloseTimeout: '1d',
  heartbeatTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '10s', nonRetryableErrorTypes: ['RunGone', 'NotLockHolder'] },
});

/** 'ended' when the converge run left the incarnation locked (this run must not go on), else its turn came. */
export function awaitTurn(applyId: string): ReturnType<SharedActivities['awaitTurn']> {
  return waiting.awaitTurn({ applyId });
}
