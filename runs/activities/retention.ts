// The retention activity (docs/configuration.md "retention"), run by the keeperRetention workflow on
// the cluster's schedule: deletes plans, runs and activity rows older than their configured age.
import { pruneHistory, type PruneCounts } from '../../db/repos/retention';
import type { SharedActivityDeps } from './deps';

/** What a keeper prunes when its config says nothing (the config's own defaults). */
const DEFAULTS = { plansMs: 168 * 3600_000, runsMs: 2160 * 3600_000, activityMs: 8760 * 3600_000 };

export function createRetentionActivities(deps: SharedActivityDeps) {
  return {
    async pruneHistory(): Promise<PruneCounts> {
      const r = deps.retention ?? DEFAULTS;
      const now = Date.now();
      const counts = await pruneHistory(deps.db, {
        plans: new Date(now - r.plansMs),
        runs: new Date(now - r.runsMs),
        activity: new Date(now - r.activityMs),
      });
      deps.log.info('retention: pruned history', { ...counts });
      return counts;
    },
  };
}
