// One pass of retention (docs/configuration.md "retention"), started by the cluster's schedule
// (runs/retention-schedule.ts). The work is one activity: the workflow only gives it retries and a
// place in Temporal's history (how much was pruned, when).
import { proxyActivities } from '@temporalio/workflow';
import type { SharedActivities } from '../activities/shared';

const shared = proxyActivities<SharedActivities>({
  startToCloseTimeout: '10m',
  retry: { initialInterval: '5s', maximumInterval: '1m', maximumAttempts: 5 },
});

export async function keeperRetention(): Promise<{ plans: number; runs: number; activity: number }> {
  return shared.pruneHistory();
}
