// Stream admissions per second (hub.accept_rate): what keeps a keeper standing when a whole fleet
// reconnects at once (a keeper restart, a network back). Each new EventStream call takes one token
// from a bucket refilled at `perSecond` and holding at most `burst`; with the bucket empty the call
// is refused before it costs a registry read, a lease or a session, and the soul is told when to come
// back. That answer is a reservation: the token the soul will use is taken now (the bucket goes into
// debt), its slot is when the debt is paid, and the soul coming back at or after it is admitted
// without competing again. Without reservations a soul back at its slot finds the token taken by
// whoever came first, is sent to the end of the queue, and a storm takes many times N/perSecond
// (measured: 1,000 souls at 20/s back in 206 s instead of ~50 s).
// Kept in this keeper's memory: it protects this process; each keeper of a fleet has its own budget.
export interface AcceptRateOptions {
  perSecond: number;
  burst: number;
  /** The longest wait a soul is told; a slot further out is not reserved. */
  maxWaitMs?: number;
  /** How long after its slot a reservation is kept for a soul that is late (its jitter, a slow network). */
  graceMs?: number;
  now?: () => number;
}

export class AcceptRate {
  private tokens: number;
  private last: number;
  private lastSweep: number;
  /** SID -> the time (ms, `now`'s clock) from which its reserved token is its own. */
  private readonly reserved = new Map<string, number>();
  private readonly now: () => number;
  private readonly maxWaitMs: number;
  private readonly graceMs: number;

  constructor(private readonly opts: AcceptRateOptions) {
    this.now = opts.now ?? Date.now;
    this.maxWaitMs = opts.maxWaitMs ?? 300_000;
    this.graceMs = opts.graceMs ?? 30_000;
    this.tokens = opts.burst;
    this.last = this.now();
    this.lastSweep = this.last;
  }

  /** 0: open the stream now. Otherwise the milliseconds soul `sid` should wait (its slot is kept). */
  take(sid: string): number {
    const now = this.now();
    this.tokens = Math.min(this.opts.burst, this.tokens + ((now - this.last) / 1000) * this.opts.perSecond);
    this.last = now;
    this.sweep(now);
    const slot = this.reserved.get(sid);
    if (slot !== undefined) {
      if (now >= slot) {
        this.reserved.delete(sid);
        return 0;
      } // paid for when it was refused
      return Math.max(1, Math.ceil(slot - now));
    }
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    // The soul's token is the one that arrives once the debt already owed is paid.
    const waitMs = ((1 - this.tokens) / this.opts.perSecond) * 1000;
    if (waitMs > this.maxWaitMs) return this.maxWaitMs; // too far out to promise: no reservation
    this.tokens -= 1;
    this.reserved.set(sid, now + waitMs);
    return Math.max(1, Math.ceil(waitMs));
  }

  /** Reservations not claimed within the grace are dropped (the soul went elsewhere); once a second. */
  private sweep(now: number): void {
    if (now - this.lastSweep < 1000) return;
    this.lastSweep = now;
    for (const [sid, slot] of this.reserved) if (now > slot + this.graceMs) this.reserved.delete(sid);
  }
}

/** The `retry-after` metadata value: seconds, with millisecond precision ("0.25", "12.5"). */
export function retryAfterValue(ms: number): string {
  return String(Math.ceil(ms) / 1000);
}
