// Presence leases in the cache: the authority for "this soul is online, and this keeper holds it"
// (interface spec 1.4; ARCHITECTURE 2). Per SID:
//   keeper:presence:<sid>        JSON {kid, epoch, session_id, since, seen}, expires after lease_ttl
//   keeper:presence-epoch:<sid>  counter; every acquisition takes the next epoch
//   keeper:presence-deadlines    sorted set sid -> when the lease runs out (ms), for the reconciler
// A newer acquisition always wins and gets a higher epoch. Refresh and release compare the stored
// epoch with the caller's inside one script, so a stale holder (a stalled keeper, an older stream)
// can neither extend nor delete a lease that is no longer its own: it is fenced and must stop.
import type { Cache } from '../platform/cache';
import { defineScript, runScript } from './scripts';

export const LEASE_PREFIX = 'keeper:presence:';
export const EPOCH_PREFIX = 'keeper:presence-epoch:';
export const DEADLINES_KEY = 'keeper:presence-deadlines';

export interface Lease {
  kid: string;
  epoch: number;
  session_id: string;
  since: number;
  seen: number;
}

const ACQUIRE = defineScript(`
local epoch = redis.call('INCR', KEYS[2])
local now = tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
redis.call('SET', KEYS[1], cjson.encode({kid = ARGV[1], epoch = epoch, session_id = ARGV[2], since = now, seen = now}), 'PX', ttl)
redis.call('ZADD', KEYS[3], now + ttl, ARGV[5])
return epoch`);

const REFRESH = defineScript(`
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local lease = cjson.decode(raw)
if lease.epoch ~= tonumber(ARGV[1]) then return 0 end
local now = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
lease.seen = now
redis.call('SET', KEYS[1], cjson.encode(lease), 'PX', ttl)
redis.call('ZADD', KEYS[2], now + ttl, ARGV[4])
return 1`);

const RELEASE = defineScript(`
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
if cjson.decode(raw).epoch ~= tonumber(ARGV[1]) then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[2])
return 1`);

// A deadline in the past with no lease left: the holder vanished without releasing (a crash, a
// partition). Returns the epoch counter (every epoch up to it is dead) or -1 if the SID is live again.
const REAP = defineScript(`
local deadline = redis.call('ZSCORE', KEYS[3], ARGV[1])
if not deadline or tonumber(deadline) > tonumber(ARGV[2]) then return -1 end
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
redis.call('ZREM', KEYS[3], ARGV[1])
return tonumber(redis.call('GET', KEYS[2]) or '0')`);

export class Presence {
  constructor(
    private readonly cache: Cache,
    private readonly kid: string,
    readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes the SID's lease for a new session; returns its epoch (higher than every earlier one). */
  async acquire(sid: string, sessionId: string): Promise<number> {
    const epoch = await runScript(
      this.cache,
      ACQUIRE,
      [LEASE_PREFIX + sid, EPOCH_PREFIX + sid, DEADLINES_KEY],
      [this.kid, sessionId, this.now(), this.ttlMs, sid],
    );
    return Number(epoch);
  }

  /** Extends our lease; false means it is gone or another session holds it (we are fenced). */
  async refresh(sid: string, epoch: number): Promise<boolean> {
    const ok = await runScript(
      this.cache,
      REFRESH,
      [LEASE_PREFIX + sid, DEADLINES_KEY],
      [epoch, this.now(), this.ttlMs, sid],
    );
    return Number(ok) === 1;
  }

  /** Deletes our lease; false when it was no longer ours (then the snapshot is not ours to change). */
  async release(sid: string, epoch: number): Promise<boolean> {
    const ok = await runScript(this.cache, RELEASE, [LEASE_PREFIX + sid, DEADLINES_KEY], [epoch, sid]);
    return Number(ok) === 1;
  }

  async get(sid: string): Promise<Lease | null> {
    return parseLease(await this.cache.get(LEASE_PREFIX + sid));
  }

  async getMany(sids: string[]): Promise<(Lease | null)[]> {
    if (sids.length === 0) return [];
    const raw = await this.cache.mGet(sids.map((s) => LEASE_PREFIX + s));
    return raw.map((r) => parseLease(r as string | null));
  }

  /** SIDs whose lease deadline passed, oldest first, with that deadline (ms). */
  async expired(limit: number): Promise<{ sid: string; deadline: number }[]> {
    const rows = await this.cache.zRangeByScoreWithScores(DEADLINES_KEY, '-inf', this.now(), {
      LIMIT: { offset: 0, count: limit },
    });
    return rows.map((r) => ({ sid: String(r.value), deadline: r.score }));
  }

  /** See REAP: the dead epoch bound for a vanished lease, or null when the SID is live again. */
  async reap(sid: string): Promise<number | null> {
    const r = Number(
      await runScript(this.cache, REAP, [LEASE_PREFIX + sid, EPOCH_PREFIX + sid, DEADLINES_KEY], [sid, this.now()]),
    );
    return r < 0 ? null : r;
  }
}

function parseLease(raw: string | null | undefined): Lease | null {
  if (!raw) return null;
  try {
    const v = JSON.parse(raw) as Lease;
    return typeof v.kid === 'string' && typeof v.epoch === 'number' ? v : null;
  } catch {
    return null;
  }
}
