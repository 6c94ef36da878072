// Reads the hub's presence leases (hub/presence.ts: `keeper:presence:<sid>` = JSON {kid, epoch, ...})
// in one MGET, so routing 1,000 hosts is one round trip to the cache.
import type { Knex } from 'knex';
import { sshSouls } from '../../db/repos/souls';
import type { Cache } from '../../platform/cache';
import type { LocateSouls } from './deps';

const LEASE_PREFIX = 'keeper:presence:';

export function presenceLocator(cache: Cache): LocateSouls {
  return async (sids) => {
    if (sids.length === 0) return [];
    const raw = await cache.mGet(sids.map((s) => LEASE_PREFIX + s));
    return raw.map((r) => {
      if (typeof r !== 'string') return null;
      try {
        const lease = JSON.parse(r) as { kid?: unknown };
        return typeof lease.kid === 'string' ? lease.kid : null;
      } catch {
        return null;
      }
    });
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
