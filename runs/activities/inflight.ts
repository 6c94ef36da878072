// The dispatch activities each keeper is running now, in the cache, so another keeper can end them
// when this one dies (runs/failover.ts, issue 33). Per keeper, one hash:
//   keeper:dispatch-inflight:<kid>   field: the activity attempt's task token (base64)
//                                    value: JSON {apply_id, hosts, sids, since, workflow_id, run_id}
// A field is written when a dispatch activity starts and deleted when it ends. The hash's TTL is
// renewed with every heartbeat tick of any of its activities, so a keeper killed without cleaning
// up leaves nothing behind for longer than TTL_MS. The token names one attempt: failing it cannot
// fail a later retry of the same activity.
//   keeper:dispatch-inflight-kids:<queue>
//                                    set of the kids of one cluster (its Temporal task queue) that
//                                    listed a dispatch, so a watcher finds them without a key scan
//                                    (same TTL). Per cluster: keepers of other clusters on the same
//                                    cache watch every second (runs/failover.ts) and must not end
//                                    this cluster's dispatches.
import type { Cache } from '../../platform/cache';

export const INFLIGHT_PREFIX = 'keeper:dispatch-inflight:';
export const inflightKidsKey = (queue: string): string => `keeper:dispatch-inflight-kids:${queue}`;
/** Long against the 2 s heartbeat tick, short enough that a dead keeper's entries go soon. */
export const TTL_MS = 30_000;

export interface InflightEntry {
  token: string;
  apply_id: string;
  hosts: number;
  /** The dispatch's souls (absent in entries of keepers from before they were listed). */
  sids?: string[];
  since: number;
  /** The workflow that scheduled the activity (the run's, or a shard's), whose sticky queue may be the dead keeper's. */
  workflow_id: string;
  run_id: string;
}

export interface InflightInfo {
  applyId: string;
  hosts: number;
  sids: string[];
  workflowId: string;
  runId: string;
}

/** The port the dispatch activity writes through; absent (tests without a cache): nothing is recorded. */
export interface InflightLog {
  begin(kid: string, token: Uint8Array, info: InflightInfo): Promise<void>;
  touch(kid: string): Promise<void>;
  end(kid: string, token: Uint8Array): Promise<void>;
}

export const tokenId = (token: Uint8Array): string => Buffer.from(token).toString('base64');

export function cacheInflightLog(cache: Cache, queue: string): InflightLog {
  const kids = inflightKidsKey(queue);
  return {
    async begin(kid, token, info) {
      const key = INFLIGHT_PREFIX + kid;
      const value: Omit<InflightEntry, 'token'> = {
        apply_id: info.applyId,
        hosts: info.hosts,
        sids: info.sids,
        since: Date.now(),
        workflow_id: info.workflowId,
        run_id: info.runId,
      };
      await cache
        .multi()
        .hSet(key, tokenId(token), JSON.stringify(value))
        .pExpire(key, TTL_MS)
        .sAdd(kids, kid)
        .pExpire(kids, TTL_MS)
        .exec();
    },
    async touch(kid) {
      await cache
        .multi()
        .pExpire(INFLIGHT_PREFIX + kid, TTL_MS)
        .pExpire(kids, TTL_MS)
        .exec();
    },
    async end(kid, token) {
      await cache.hDel(INFLIGHT_PREFIX + kid, tokenId(token));
    },
  };
}

/**
 * The kids of cluster `queue` other than `self` with dispatches listed now. A kid stays in the set until the set's TTL
 * (removing it here could race its next `begin`); the set holds one member per keeper ever seen.
 */
export async function inflightKids(cache: Cache, self: string, queue: string): Promise<string[]> {
  const out: string[] = [];
  for (const kid of await cache.sMembers(inflightKidsKey(queue))) {
    if (kid !== self && (await cache.hLen(INFLIGHT_PREFIX + kid)) > 0) out.push(kid);
  }
  return out;
}

/** The entries of `kid`'s hash (the failover watch reads them once that keeper is gone). */
export async function listInflight(cache: Cache, kid: string): Promise<InflightEntry[]> {
  const all = await cache.hGetAll(INFLIGHT_PREFIX + kid);
  const out: InflightEntry[] = [];
  for (const [token, raw] of Object.entries(all)) {
    try {
      out.push({ token, ...(JSON.parse(raw) as Omit<InflightEntry, 'token'>) });
    } catch {
      // A value this version cannot read: left to the TTL.
    }
  }
  return out;
}

/** Removes one entry; true only for the caller that removed it, so two keepers never fail it twice. */
export async function takeInflight(cache: Cache, kid: string, token: string): Promise<boolean> {
  return (await cache.hDel(INFLIGHT_PREFIX + kid, token)) === 1;
}
