// Reads the hub's presence leases (hub/presence.ts: `keeper:presence:<sid>` = JSON {kid, epoch, ...})
// in one MGET, so routing 1,000 hosts is one round trip to the cache.
// A lease outlives its keeper by up to reaper.lease_ttl (3.5 s): a soul whose keeper was just killed
// and that has not reconnected yet still has a lease naming the dead keeper. Routed there, its
// dispatch would wait on a queue nobody polls for the schedule-to-start timeout (15 s). So a lease
// whose keeper's kid claim (keeper/kid-claim.ts, 3 s lifetime) is gone counts as no lease: the soul
// is not located yet, and a re-routing waits for it to appear on the keeper it moves to
// (locate-wait.ts) instead (issue 33: a killed keeper's run ends within seconds). One more MGET, of
// the few distinct kids.
import type { Knex } from 'knex';
import { sshSouls } from '../../db/repos/souls';
import type { Cache } from '../../platform/cache';
import { kidClaimKey } from '../../platform/keeper-claims';
import type { LocateSouls } from './deps';

const LEASE_PREFIX = 'keeper:presence:';

export function presenceLocator(cache: Cache): LocateSouls {
  return async (sids) => {
    if (sids.length === 0) return [];
    const raw = await cache.mGet(sids.map((s) => LEASE_PREFIX + s));
    const kids = raw.map((r) => {
      if (typeof r !== 'string') return null;
      try {
        const lease = JSON.parse(r) as { kid?: unknown };
        return typeof lease.kid === 'string' ? lease.kid : null;
      } catch {
        return null;
      }
    });
    const distinct = [...new Set(kids.filter((k): k is string => k !== null))];
    if (distinct.length === 0) return kids;
    const claims = await cache.mGet(distinct.map(kidClaimKey));
    const dead = new Set(distinct.filter((_, i) => claims[i] === null));
    return kids.map((k) => (k !== null && dead.has(k) ? null : k));
  };
}

/**
 * Routing with push hosts: a soul registered with transport ssh has no stream and no lease; it is
 * dispatched by this keeper (`kid`), whose dispatch worker holds the SSH transport. A keeper that
 * stops is noticed by the schedule-to-start timeout and the host is routed again by whichever
 * keeper resolves it next.
 */
export function transportLocator(db: Knex, presence: LocateSouls, kid: string): LocateSouls {
  return async (sids) => {
    const kids = await presence(sids);
    const missing = sids.filter((_, i) => kids[i] === null);
    if (missing.length === 0) return kids;
    const ssh = await sshSouls(db, missing);
    return kids.map((k, i) => k ?? (ssh.has(sids[i]!) ? kid : null));
  };
}
