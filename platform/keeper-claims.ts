// The live keepers of a cluster, read from their kid claims in the cache (keeper/kid-claim.ts writes
// and renews them every 0.5 s, with a 3 s lifetime). Keepers of one cluster share a Temporal task
// queue, and the claim names it, so keepers of other clusters on the same cache are not counted.
// Used where one keeper's view is not enough: a `file://` source is refused while more than one
// keeper of the cluster is live, since any of them may render its runs (issue 33).
import type { Cache } from './cache';

export const KID_CLAIM_PREFIX = 'keeper:kid:';

export function kidClaimKey(kid: string): string {
  return `${KID_CLAIM_PREFIX}${kid}`;
}

/** What a claim holds: which process holds the kid, and for which cluster (its task queue). */
export interface KidClaimHolder {
  token: string;
  host: string;
  pid: number;
  since: string;
  queue?: string;
}

/**
 * The kids claimed live for `queue`, sorted. A claim that names no queue (a keeper from before the
 * claim named it, or a foreign value) is not counted: its cluster is unknown, and on a cache shared
 * by several clusters counting it would refuse what is safe.
 */
export async function liveKeepers(cache: Cache, queue: string): Promise<string[]> {
  const kids: string[] = [];
  for await (const keys of cache.scanIterator({ MATCH: `${KID_CLAIM_PREFIX}*`, COUNT: 100 })) {
    for (const key of Array.isArray(keys) ? keys : [keys]) {
      const raw = await cache.get(key);
      if (raw === null) continue;
      let holder: Partial<KidClaimHolder> = {};
      try {
        holder = JSON.parse(raw) as KidClaimHolder;
      } catch {
        /* a foreign value: not a claim of this cluster */
      }
      if (holder.queue === queue) kids.push(key.slice(KID_CLAIM_PREFIX.length));
    }
  }
  return kids.sort();
}
