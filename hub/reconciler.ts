// Keeps the registry snapshot (souls.status) following the presence leases (interface spec 1.4, 3.1).
// The holder of a stream records connects and clean disconnects itself; this loop covers what a
// holder cannot: a keeper that crashed or lost the cache, whose leases simply run out.
//   every pass  — SIDs whose lease deadline passed with no lease left: mark disconnected, fenced by
//                 the epoch counter, so a soul that reconnected meanwhile is never marked down.
//   every Nth   — a sweep of all rows the snapshot calls connected against the leases (repairs a
//                 lost deadline entry, a cache flush, or a kid/epoch written out of order).
// Every keeper runs it; a short cache lock lets one instance do each pass.
import type { Knex } from 'knex';
import type { Logger } from '../common/logger';
import { connectedPage, recordConnected, recordDisconnected } from '../db/repos/presence';
import type { Cache } from '../platform/cache';
import type { Component } from '../platform/component';
import type { HubMetrics } from './metrics';
import type { Presence } from './presence';
import { defineScript, runScript } from './scripts';

const LOCK_KEY = 'keeper:reconciler-lock';
const BATCH = 500;
const SWEEP_EVERY = 5;

const UNLOCK = defineScript(
  `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`,
);

export interface ReconcilerDeps {
  db: Knex;
  cache: Cache;
  presence: Presence;
  kid: string;
  intervalMs: number;
  log: Logger;
  metrics: HubMetrics;
}

export class Reconciler {
  private passes = 0;

  constructor(private readonly deps: ReconcilerDeps) {}

  /** One pass, if this keeper gets the lock. Returns the number of rows changed. */
  async pass(): Promise<number> {
    const lockTtl = Math.max(1000, this.deps.intervalMs * 3);
    const got = await this.deps.cache.set(LOCK_KEY, this.deps.kid, { NX: true, PX: lockTtl });
    if (got !== 'OK') return 0;
    const end = this.deps.metrics.reconcilerPass.startTimer();
    try {
      let changed = await this.reapExpired();
      if (this.passes++ % SWEEP_EVERY === 0) changed += await this.sweep();
      return changed;
    } finally {
      end();
      await runScript(this.deps.cache, UNLOCK, [LOCK_KEY], [this.deps.kid]).catch(() => undefined);
    }
  }

  private async reapExpired(): Promise<number> {
    let changed = 0;
    for (;;) {
      const expired = await this.deps.presence.expired(BATCH);
      if (expired.length === 0) return changed;
      const dead: { sid: string; epoch: number; lastSeen: Date; deadline: number }[] = [];
      await Promise.all(
        expired.map(async (e) => {
          const epoch = await this.deps.presence.reap(e.sid);
          if (epoch !== null)
            dead.push({
              sid: e.sid,
              epoch,
              lastSeen: new Date(e.deadline - this.deps.presence.ttlMs),
              deadline: e.deadline,
            });
        }),
      );
      const done = await recordDisconnected(this.deps.db, dead);
      const now = Date.now();
      const byId = new Map(dead.map((d) => [d.sid, d]));
      for (const sid of done) this.deps.metrics.reconcilerLag.observe((now - byId.get(sid)!.deadline) / 1000);
      this.deps.metrics.reconcilerCorrections.inc({ to: 'disconnected' }, done.length);
      if (done.length > 0)
        this.deps.log.info('souls marked disconnected (lease ran out)', {
          count: done.length,
          sids: done.slice(0, 20),
        });
      changed += done.length;
      if (expired.length < BATCH) return changed;
    }
  }

  private async sweep(): Promise<number> {
    let changed = 0;
    let after: string | undefined;
    for (;;) {
      const rows = await connectedPage(this.deps.db, after, BATCH);
      if (rows.length === 0) return changed;
      after = rows[rows.length - 1]!.sid;
      const leases = await this.deps.presence.getMany(rows.map((r) => r.sid));
      const gone: { sid: string; epoch: number }[] = [];
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i]!;
        const lease = leases[i];
        if (!lease) {
          // Fenced by the epoch the row shows: a session recorded after this read is untouched.
          gone.push({ sid: row.sid, epoch: row.epoch ?? 0 });
        } else if (lease.kid !== row.kid || lease.epoch !== row.epoch) {
          if (await recordConnected(this.deps.db, { sid: row.sid, kid: lease.kid, epoch: lease.epoch })) {
            changed++;
            this.deps.metrics.reconcilerCorrections.inc({ to: 'connected' });
          }
        }
      }
      // Guard against a lease taken between the read above and this write: re-check just those.
      const again = await this.deps.presence.getMany(gone.map((g) => g.sid));
      const done = await recordDisconnected(
        this.deps.db,
        gone.filter((_, i) => again[i] === null),
      );
      this.deps.metrics.reconcilerCorrections.inc({ to: 'disconnected' }, done.length);
      changed += done.length;
      if (rows.length < BATCH) return changed;
    }
  }
}

export function reconcilerComponent(deps: ReconcilerDeps): Component {
  const r = new Reconciler(deps);
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  return {
    name: 'presence reconciler',
    async start() {
      timer = setInterval(() => {
        if (running) return;
        running = r
          .pass()
          .catch((err: Error) => deps.log.warn('reconciler pass failed', { error: err.message }))
          .finally(() => {
            running = undefined;
          });
      }, deps.intervalMs);
    },
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
