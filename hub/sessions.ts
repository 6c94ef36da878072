// The live sessions of this keeper, one per SID, and the dispatch API the workers call.
//
// Second connection for a SID: the newer stream wins. It takes the presence lease with a higher
// epoch; the older session gets goodbye{superseded} and is closed, at once when it is on this
// keeper, at the next lease refresh (a third of the lease TTL) when it is on another one. A soul
// told "superseded" exits instead of reconnecting, so two processes with one identity do not take
// the stream from each other in a loop (docs/agents.md).
//
// Certificate rotation (hub/renewal.ts): once a soul has its new certificate, its stream is marked
// rotating. Steps already in flight finish on it; new steps wait for the soul's next stream (up to
// ROTATION_RECONNECT_MS) instead of going out on a stream about to end. When the last step in
// flight is answered the keeper says goodbye{rotated}, and keeps the presence lease and the
// registry's `connected`: the soul reconnects at once with the new certificate and takes both over.
// A soul that does not come back lets the lease lapse and the reconciler records it disconnected.
//
// A ticker refreshes the leases of all sessions in one batch every third of the TTL rather than on
// every heartbeat, which keeps cache traffic at (sessions / interval) whatever the heartbeat rate.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Logger } from '../common/logger';
import { normalSerial } from '../db/repos/certificates';
import { recordConnected, recordDisconnected, touchLastSeen } from '../db/repos/presence';
import type { Soulprint } from '../proto/types';
import { SoulNotConnected, StepCancelled } from './dispatch-errors';
import type { HubMetrics } from './metrics';
import type { Lease, Presence } from './presence';
import { Session, type SendStepOptions, type SessionSink, type StepOrder, type StepReport } from './session';

/** How often a live session's last_seen_at moves in the registry; finer is not worth the writes. */
const LAST_SEEN_EVERY_MS = 30_000;
/** How long a step waits for a rotating soul's next stream before it is refused as not connected. */
export const ROTATION_RECONNECT_MS = 20_000;

export interface SessionsDeps {
  db: Knex;
  presence: Presence;
  kid: string;
  log: Logger;
  metrics: HubMetrics;
  /** The ticker's clock (tests move it to show a stalled process); Date.now otherwise. */
  now?: () => number;
}

export class Sessions {
  private readonly bySid = new Map<string, Session>();
  /** SIDs whose stream ends for a rotation, with the waiters for their next session. */
  private readonly rotating = new Map<string, { until: number; waiters: ((s: Session | undefined) => void)[] }>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  /** The ticker's database writes (snapshots, last_seen_at), apart from the lease refreshes. */
  private writing: Promise<void> | undefined;
  /** When the last tick judged silence: a tick far later than its interval means this process stalled. */
  private lastTickAt = 0;
  /** Told of every soul that connects here (runs/failover.ts: a soul arriving may have left a dead keeper). */
  private readonly connectListeners: ((sid: string) => void)[] = [];

  constructor(private readonly deps: SessionsDeps) {}

  /** The interval the souls are told to heartbeat at, and the refresh tick. */
  get heartbeatIntervalMs(): number {
    return Math.max(200, Math.floor(this.deps.presence.ttlMs / 3));
  }

  // ---- dispatch API (issue 7's activities call these) ----

  /**
   * Sends one step to the soul's live stream on this keeper and resolves with its result.
   * Rejects with SoulNotConnected (not sent), StepTimeout, StepInterrupted or StepCancelled
   * (sent, outcome unknown). Never resolves a step that the soul did not answer.
   */
  sendStep(sid: string, step: StepOrder, opts: SendStepOptions): Promise<StepReport> {
    const s = this.bySid.get(sid);
    if (s && !s.closed && !s.rotating) return s.sendStep(step, opts);
    const r = this.rotating.get(sid);
    if (!r || Date.now() > r.until) return Promise.reject(new SoulNotConnected(sid));
    return new Promise<Session | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), r.until - Date.now());
      r.waiters.push((next) => {
        clearTimeout(timer);
        resolve(next);
      });
    }).then((next) => {
      // Cancelled while waiting: nothing was sent, and nothing must be sent now.
      if (opts.signal?.aborted) return Promise.reject(new StepCancelled(sid, 'not sent'));
      return next && !next.closed ? next.sendStep(step, opts) : Promise.reject(new SoulNotConnected(sid));
    });
  }

  /**
   * The soul has its new certificate: finish what is in flight on this stream, then end it with
   * goodbye{rotated}, keeping the lease for the soul's next stream.
   */
  async rotate(session: Session): Promise<void> {
    if (session.rotating || session.closed) return;
    session.rotating = true;
    const entry = { until: Date.now() + ROTATION_RECONNECT_MS, waiters: [] as ((s: Session | undefined) => void)[] };
    this.rotating.set(session.sid, entry);
    setTimeout(() => {
      if (this.rotating.get(session.sid) !== entry) return;
      this.rotating.delete(session.sid);
      for (const w of entry.waiters) w(undefined);
    }, ROTATION_RECONNECT_MS + 100).unref();
    await session.whenIdle();
    if (session.closed) return;
    entry.until = Date.now() + ROTATION_RECONNECT_MS;
    session.close('certificate rotated', 'rotated');
    await this.end(session, 'certificate rotated', { keepLease: true });
  }

  /** Whether this keeper holds a live stream for the SID. */
  isConnected(sid: string): boolean {
    const s = this.bySid.get(sid);
    return s !== undefined && !s.closed;
  }

  /** Which keeper holds the SID's stream according to the presence lease (null: none). */
  locate(sid: string): Promise<Lease | null> {
    return this.deps.presence.get(sid);
  }

  /** Calls `listener(sid)` each time a soul's stream opens here (the failover watch, runs/failover.ts). */
  onConnected(listener: (sid: string) => void): void {
    this.connectListeners.push(listener);
  }

  connectedSids(): string[] {
    return [...this.bySid.keys()];
  }

  get size(): number {
    return this.bySid.size;
  }

  // ---- lifecycle, used by the event-stream server ----

  /** Takes the lease, supersedes an older local session, records the snapshot. Throws if the cache fails. */
  async open(sid: string, soulprint: Soulprint, sink: SessionSink, serial?: string): Promise<Session> {
    const id = randomUUID();
    const epoch = await this.deps.presence.acquire(sid, id);
    const session = new Session(id, sid, epoch, soulprint, sink);
    if (serial !== undefined) session.serial = normalSerial(serial);
    const previous = this.bySid.get(sid);
    this.bySid.set(sid, session);
    this.deps.metrics.soulsConnected.set(this.bySid.size);
    const rotation = this.rotating.get(sid);
    if (rotation) {
      this.rotating.delete(sid);
      for (const w of rotation.waiters) w(session);
    }
    if (previous) {
      previous.close('superseded by a newer stream', 'superseded');
      void this.end(previous, 'superseded');
    }
    await this.record(session);
    this.deps.log.info('soul connected', { sid, epoch, session_id: id, superseded: previous?.id });
    for (const l of this.connectListeners) {
      try {
        l(sid);
      } catch (err) {
        this.deps.log.warn('a connect listener failed', { sid, error: (err as Error).message });
      }
    }
    return session;
  }

  /** Closes this keeper's stream of `sid`, if it holds one, telling the soul it was revoked. */
  async revoke(sid: string): Promise<boolean> {
    const s = this.bySid.get(sid);
    if (!s) return false;
    s.close('revoked by an operator', 'revoked');
    await this.end(s, 'revoked by an operator');
    return true;
  }

  /**
   * The soul's certificate was replaced (re-onboarded, or its renewed certificate has connected):
   * closes this keeper's stream of `sid` unless it was opened with `keepSerial`, telling the soul it
   * was superseded (a copy of the old identity stops; the host onboarded again runs with the new
   * one). Steps in flight on it are interrupted: their outcome is unknown.
   */
  async retire(sid: string, keepSerial: string): Promise<boolean> {
    const s = this.bySid.get(sid);
    if (!s || s.serial === normalSerial(keepSerial)) return false;
    s.close('its certificate was replaced by a newer one', 'superseded');
    await this.end(s, 'certificate replaced');
    return true;
  }

  /**
   * The stream ended (either side). Releases the lease if still ours and marks the soul
   * disconnected; with keepLease (a rotation) neither: the soul's next stream takes both over.
   */
  async end(session: Session, reason: string, opts: { keepLease?: boolean } = {}): Promise<void> {
    if (session.ended) return;
    session.ended = true;
    session.close(reason);
    if (this.bySid.get(session.sid) === session) this.bySid.delete(session.sid);
    this.deps.metrics.soulsConnected.set(this.bySid.size);
    if (opts.keepLease) {
      this.deps.log.info('soul stream ended for its reconnect', { sid: session.sid, epoch: session.epoch, reason });
      return;
    }
    const released = await this.deps.presence.release(session.sid, session.epoch).catch((err: Error) => {
      // The lease then runs out by itself and the reconciler records the disconnect.
      this.deps.log.warn('cannot release presence lease', { sid: session.sid, error: err.message });
      return false;
    });
    if (released) {
      await recordDisconnected(this.deps.db, [{ sid: session.sid, epoch: session.epoch }]).catch((err: Error) =>
        this.deps.log.warn('cannot record disconnect; the reconciler will', { sid: session.sid, error: err.message }),
      );
    }
    this.deps.log.info('soul disconnected', { sid: session.sid, epoch: session.epoch, reason });
  }

  async updateSoulprint(session: Session, soulprint: Soulprint): Promise<void> {
    session.soulprint = soulprint;
    session.recorded = false; // the next tick writes it if this write fails
    await this.record(session);
    session.factsRecorded(session.recorded);
  }

  /** Asks the soul's stream on this keeper for fresh facts (hub/facts-refresh.ts); false when not held here. */
  refreshFacts(sid: string, timeoutMs: number): Promise<boolean> {
    const s = this.bySid.get(sid);
    if (!s || s.closed) return Promise.resolve(false);
    return s.refreshFacts(timeoutMs);
  }

  private async record(session: Session): Promise<void> {
    try {
      session.recorded = await recordConnected(this.deps.db, {
        sid: session.sid,
        kid: this.deps.kid,
        epoch: session.epoch,
        soulprint: session.soulprint as unknown as Record<string, unknown>,
      });
      session.lastSeenWritten = Date.now();
    } catch (err) {
      this.deps.log.warn('cannot record connection; retrying at the next tick', {
        sid: session.sid,
        error: (err as Error).message,
      });
    }
  }

  // ---- the ticker ----

  start(): void {
    this.timer = setInterval(() => {
      if (!this.ticking)
        this.ticking = this.tick().finally(() => {
          this.ticking = undefined;
        });
    }, this.heartbeatIntervalMs);
  }

  /** One pass: close silent sessions, refresh leases (closing fenced ones), retry snapshot writes. */
  async tick(): Promise<void> {
    // The ticker fires in the event loop's timer phase, before the poll phase reads the sockets:
    // after this process was busy (a burst of handshakes, a large dispatch), heartbeats that did
    // arrive are still unread. One turn of the loop lets them be read before silence is judged, and
    // a tick that comes more than two intervals late (this process stalled, not the souls) judges
    // none: the next one, on time, does.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const now = (this.deps.now ?? Date.now)();
    const stalled = this.lastTickAt > 0 && now - this.lastTickAt > 2 * this.heartbeatIntervalMs;
    this.lastTickAt = now;
    const ttl = this.deps.presence.ttlMs;
    const touch: { sid: string; epoch: number; seen: Date }[] = [];
    const unrecorded: Session[] = [];
    await Promise.all(
      [...this.bySid.values()].map(async (s) => {
        if (!stalled && now - s.lastHeartbeat > ttl) {
          s.close('no heartbeat within the lease TTL', 'silent');
          return this.end(s, 'silent');
        }
        let held: boolean;
        try {
          held = await this.deps.presence.refresh(s.sid, s.epoch);
        } catch (err) {
          this.deps.log.warn('cannot refresh presence lease', { sid: s.sid, error: (err as Error).message });
          return;
        }
        if (!held) {
          const lease = await this.deps.presence.get(s.sid).catch(() => null);
          const superseded = lease !== null && lease.epoch > s.epoch;
          s.close(
            superseded ? `superseded by a stream on keeper ${lease.kid}` : 'presence lease lost',
            superseded ? 'superseded' : 'fenced',
          );
          return this.end(s, superseded ? 'superseded' : 'fenced');
        }
        if (!s.recorded) unrecorded.push(s);
        else if (now - s.lastSeenWritten > LAST_SEEN_EVERY_MS)
          touch.push({ sid: s.sid, epoch: s.epoch, seen: new Date(s.lastHeartbeat) });
      }),
    );
    // The database writes do not hold the tick: a run writing thousands of steps can keep the pool
    // busy for seconds, and a tick waiting on it would refresh no lease, so live souls would lose
    // theirs (seen at 100 real souls: "presence lease lost" mid-run). One batch of writes at a time;
    // what a busy tick leaves (a snapshot not recorded, a last_seen_at not touched) the next one does.
    if (this.writing || (unrecorded.length === 0 && touch.length === 0)) return;
    for (const t of touch) {
      const live = this.bySid.get(t.sid);
      if (live) live.lastSeenWritten = now;
    }
    this.writing = (async () => {
      for (const s of unrecorded) if (!s.ended) await this.record(s);
      await touchLastSeen(this.deps.db, touch).catch((err: Error) =>
        this.deps.log.warn('cannot update last_seen_at', { error: err.message }),
      );
    })().finally(() => {
      this.writing = undefined;
    });
  }

  /** Keeper shutdown: goodbye to every soul (they reconnect elsewhere), leases released, snapshot updated. */
  async closeAll(): Promise<void> {
    clearInterval(this.timer);
    await this.ticking;
    await this.writing;
    const all = [...this.bySid.values()];
    this.bySid.clear();
    this.deps.metrics.soulsConnected.set(0);
    for (const s of all) {
      s.ended = true;
      s.close('keeper shutting down', 'shutdown');
    }
    const released = await Promise.all(all.map((s) => this.deps.presence.release(s.sid, s.epoch).catch(() => false)));
    const gone = all.filter((_, i) => released[i]).map((s) => ({ sid: s.sid, epoch: s.epoch }));
    await recordDisconnected(this.deps.db, gone).catch((err: Error) =>
      this.deps.log.warn('cannot record disconnects at shutdown; the reconciler of another keeper will', {
        error: err.message,
      }),
    );
  }
}
