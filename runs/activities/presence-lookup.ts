// Reads the hub's presence leases (hub/presence.ts: `keeper:presence:<sid>` = JSON {kid, epoch, ...})
// in one MGET, so routing 1,000 hosts is one round trip to the cache.
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
