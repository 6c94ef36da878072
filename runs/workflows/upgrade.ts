// `POST /v1/incarnations/{name}/upgrade`: the operator-initiated, forward-only state migration.
// Hosts are not touched; the migrations run and commit in one transaction, or the incarnation is
// locked with its state unchanged.
import { ActivityFailure, proxyActivities } from '@temporalio/workflow';
import type { SharedActivities } from '../activities/shared';
import { awaitTurn } from './turn';
import { failedRun } from './run';
import type { UpgradeWorkflowInput } from '../messages';

const shared = proxyActivities<SharedActivities>({
  startToCloseTimeout: '2m',
  retry: { initialInterval: '1s', maximumAttempts: 5, nonRetryableErrorTypes: ['MigrationFailed', 'RunGone'] },
});

export async function incarnationUpgrade(
  input: UpgradeWorkflowInput,
): Promise<{ applyId: string; status: 'succeeded' | 'failed'; version?: number }> {
  // Recorded behind a converge run: its end passes the lock to this upgrade, or fails it (nothing
  // migrated) when the converge run locked the incarnation. Only such upgrades have `waitsFor`.
  if (input.waitsFor && (await awaitTurn(input.applyId)) === 'ended') {
    return failedRun(
      { applyId: input.applyId, status: 'failed' as const },
      `converge run ${input.waitsFor}, which this upgrade waited for, did not leave the incarnation ready; nothing was migrated`,
    );
  }
  try {
    const r = await shared.upgradeState({ applyId: input.applyId, toVersion: input.toVersion });
    return { applyId: input.applyId, status: 'succeeded', version: r.version };
  } catch (err) {
    const cause = err instanceof ActivityFailure && err.cause ? err.cause : err;
    const reason = cause instanceof Error ? cause.message : String(cause);
    await shared.lockRun({ applyId: input.applyId, reason: `upgrade failed: ${reason}`, phase: 'commit' });
    return failedRun({ applyId: input.applyId, status: 'failed' as const }, `upgrade failed: ${reason}`);
  }
}
