// The presence ticker's judgement of silence (hub/sessions.ts), against the real presence store and
// registry of a test keeper: when the keeper itself stalled (a tick far later than its interval),
// the souls whose heartbeats it could not read meanwhile are not closed as silent; the next tick on
// time closes a soul that really is silent and keeps the one that heartbeats. And a database too
// busy to take the ticker's writes does not hold the lease refreshes. The ticker's clock is moved by
// the test; the leases, the registry, the database and the goodbye are the real ones.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import knexFactory from 'knex';
import { silentLogger } from '../../common/logger';
import { createHubMetrics } from '../../hub/metrics';
import { Presence } from '../../hub/presence';
import { Sessions } from '../../hub/sessions';
import { createMetrics } from '../../platform/metrics';
import type { KeeperMessage, Soulprint } from '../../proto/types';
import { cleanupKeeperFiles, startTestKeeper, type TestKeeper } from '../support/keeper';
import { register, waitFor } from './harness';

function sink() {
  const got: KeeperMessage[] = [];
  return {
    got,
    ended: false,
    write(m: KeeperMessage) {
      got.push(m);
    },
    end() {
      this.ended = true;
    },
  };
}

function soulprint(fqdn: string): Soulprint {
  return {
    fqdn,
    hostname: fqdn.split('.')[0]!,
    os_family: 'debian',
    os_name: 'Debian',
    os_release: '12',
    architecture: 'x86_64',
    cpu_count: 2,
    memory_bytes: 1,
    addresses: [],
    soul_version: 'test',
  };
}

describe('presence ticks: a keeper that stalled does not blame its souls for it', function () {
  this.timeout(60_000);
  let k: TestKeeper;
  before(async () => {
    k = await startTestKeeper({ kid: `kt-${randomBytes(2).toString('hex')}` });
  });
  after(async () => {
    await k?.keeper.stop();
    if (k) await cleanupKeeperFiles(k);
  });

  it('a tick more than two intervals late closes no session; the next one on time closes the silent soul and keeps the live one', async () => {
    const kid = `ticks-${randomBytes(3).toString('hex')}`;
    const clock = { now: Date.now() };
    const presence = new Presence(k.keeper.runtime.cache, kid, 30_000);
    const sessions = new Sessions({
      db: k.keeper.runtime.db,
      presence,
      kid,
      log: silentLogger,
      metrics: createHubMetrics(createMetrics(kid, 'test')),
      now: () => clock.now,
    });
    const interval = sessions.heartbeatIntervalMs; // a third of the TTL: 10 s
    const [quiet, busy] = [sink(), sink()];
    const silentSid = `silent-${kid}.ticks.test`;
    const liveSid = `live-${kid}.ticks.test`;
    const silent = await sessions.open(silentSid, soulprint(silentSid), quiet);
    const live = await sessions.open(liveSid, soulprint(liveSid), busy);
    try {
      await sessions.tick(); // on time: the first tick of this ticker
      const seenBefore = (await presence.get(liveSid))!.seen;
      await new Promise((r) => setTimeout(r, 5)); // the store's own clock moves on

      // The keeper stalls for three intervals, longer than the TTL: no heartbeat was read meanwhile.
      clock.now += 3 * interval + 1_000;
      silent.lastHeartbeat = live.lastHeartbeat = clock.now - 3 * interval - 1_000;
      await sessions.tick();
      assert.ok(
        sessions.isConnected(silentSid) && sessions.isConnected(liveSid),
        'the late tick judged no soul silent',
      );
      assert.deepEqual([...quiet.got, ...busy.got], [], 'no goodbye was sent');
      const lease = await presence.get(liveSid);
      assert.ok(lease?.kid === kid && lease.seen > seenBefore, 'and it refreshed the leases');

      // The next tick comes on time: the live soul's heartbeat was read, the silent one sent none.
      clock.now += interval;
      live.lastHeartbeat = clock.now - 100;
      await sessions.tick();
      assert.equal(sessions.isConnected(silentSid), false, 'the silent soul is closed');
      assert.deepEqual(quiet.got, [{ goodbye: { reason: 'silent' } }]);
      assert.equal(await presence.get(silentSid), null, 'its lease is released');
      assert.ok(sessions.isConnected(liveSid), 'the live soul stays');
      assert.deepEqual(busy.got, []);
    } finally {
      await sessions.closeAll();
    }
  });

  it('refreshes the leases while the database is too busy to take its writes, and writes them once it is free', async () => {
    const kid = `busy-${randomBytes(3).toString('hex')}`;
    // A pool of one connection, held by a long statement: as a run writing thousands of steps holds the keeper's.
    const db = knexFactory({ client: 'pg', connection: k.db.dsn, pool: { min: 0, max: 1 } });
    const presence = new Presence(k.keeper.runtime.cache, kid, 30_000);
    const sessions = new Sessions({
      db,
      presence,
      kid,
      log: silentLogger,
      metrics: createHubMetrics(createMetrics(kid, 'test')),
    });
    const sid = `held-${kid}.ticks.test`;
    await register(k, sid);
    try {
      const s = await sessions.open(sid, soulprint(sid), sink());
      assert.equal(s.recorded, true, 'connected in the registry');
      const before = (await presence.get(sid))!.seen;
      s.recorded = false; // a snapshot the ticker must write again
      let busyEnded = false;
      const busy = db.raw('select pg_sleep(2)').then(() => {
        busyEnded = true;
      });
      await new Promise((r) => setTimeout(r, 100)); // the statement holds the pool's connection
      await sessions.tick();
      assert.equal(busyEnded, false, 'the tick ended while the database was still busy');
      assert.ok((await presence.get(sid))!.seen > before, 'the lease was refreshed all the same');
      assert.equal(s.recorded, false, 'its write waits for the database');
      await busy;
      await waitFor('the snapshot written once the database is free', async () => s.recorded, 10_000, 50);
    } finally {
      await sessions.closeAll();
      await db.destroy();
    }
  });
});
