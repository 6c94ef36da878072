// One live keeper per `kid`. Dispatch is routed to the task queue `keeper-<kid>` of the keeper whose
// kid the presence lease names, so two live keepers sharing a kid would take each other's steps for
// souls they do not hold. At start, a keeper claims its kid in the cache and renews the claim every
// RENEW_MS; a second keeper with the same kid refuses to start while the claim is being renewed.
//
// A keeper that crashed leaves a claim nobody renews: its successor (a restart with the same
// config) watches it for a little more than one renewal period, sees no renewal, waits for it to
// lapse (at most CLAIM_TTL_MS) and takes it over. So a crash-restart waits a few seconds; a real
// duplicate is refused with the reason and the fix.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Logger } from '../common/logger';
import type { Cache } from '../platform/cache';
import type { Component } from '../platform/component';
import { kidClaimKey as key, type KidClaimHolder as Holder } from '../platform/keeper-claims';
import { StartupError } from '../platform/runtime';

// The claim is two things: the kid lock, and the sign of life the failover watch reads
// (runs/failover.ts: a keeper whose claim lapsed is taken as dead and its dispatches are ended).
// Its lifetime is what a killed keeper's runs wait for (issue 33), and it must outlast any pause of
// a live keeper, or a live keeper would be taken as dead: its dispatch ended and sent again beside it
// (the souls' ledgers answer the repeats, so nothing runs twice, but the work is done twice) and a
// restart with its kid could take the lock from under it. bench/failover records the lowest
// remaining lifetime of the live keeper's claim while 20 souls reconnect to it: at load 19-22 on two
// cores a renewal came 1.2-2.6 s after the one before (docs/reliability.md). So the lifetime stays
// 3 s: 2 s or 2.5 s would have let a live keeper's claim lapse. Renewed every 0.5 s, so a stall of
// up to 2.5 s is survived (1 s renewals: 2 s), and the claim lapses 2.5-3 s after a kill.
export const CLAIM_TTL_MS = 3000;
export const RENEW_MS = 500;

// Renews only a claim that is ours (or gone, as after a cache restart): never another keeper's.
const RENEW = `local v = redis.call('GET', KEYS[1])
if v == false or v == ARGV[1] then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return 0`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

export function kidClaim(
  cache: Cache,
  kid: string,
  log: Logger,
  /** The cluster's task queue, kept in the claim so the live keepers of one cluster can be counted. */
  queue?: string,
  timing = { ttlMs: CLAIM_TTL_MS, renewMs: RENEW_MS },
): Component {
  const me: Holder = {
    token: randomBytes(12).toString('hex'),
    host: os.hostname(),
    pid: process.pid,
    since: new Date().toISOString(),
    ...(queue !== undefined ? { queue } : {}),
  };
  const value = JSON.stringify(me);
  let timer: NodeJS.Timeout | undefined;
  let lost = false;

  const tryClaim = async () => (await cache.set(key(kid), value, { NX: true, PX: timing.ttlMs })) === 'OK';

  return {
    name: `kid claim ${kid}`,
    async start() {
      const deadline = Date.now() + timing.ttlMs + 2 * timing.renewMs;
      while (!(await tryClaim())) {
        const before = await cache.pTTL(key(kid));
        const raw = await cache.get(key(kid));
        // Longer than one renewal period: a live holder renews in that time and its TTL goes back up.
        await new Promise((r) => setTimeout(r, timing.renewMs + 300));
        const after = await cache.pTTL(key(kid));
        const still = await cache.get(key(kid));
        if (still !== null && still === raw && after > before) {
          let holder: Partial<Holder> = {};
          try {
            holder = JSON.parse(raw ?? '{}') as Holder;
          } catch {
            /* an old or foreign value */
          }
          throw new StartupError(
            `another keeper with kid ${kid} is live (host ${holder.host ?? '?'}, pid ${holder.pid ?? '?'}, since ${holder.since ?? '?'}): ` +
              "two keepers must not share a kid, or each would take the other's dispatch. Give this one another kid in its config, or stop the other first",
          );
        }
        if (Date.now() > deadline)
          throw new StartupError(
            `could not claim kid ${kid} in the cache within ${timing.ttlMs + 2 * timing.renewMs} ms; retry`,
          );
      }
      timer = setInterval(() => {
        cache.eval(RENEW, { keys: [key(kid)], arguments: [value, String(timing.ttlMs)] }).then(
          (ok) => {
            if (ok !== 1 && !lost) {
              lost = true;
              log.error('another keeper has claimed this kid: two keepers now share it; stop one of them', { kid });
            } else if (ok === 1) lost = false;
          },
          () => {
            /* the cache is away: the claim is renewed again once it is back */
          },
        );
      }, timing.renewMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      await cache.eval(RELEASE, { keys: [key(kid)], arguments: [value] }).catch(() => undefined);
    },
  };
}
