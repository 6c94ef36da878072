// Stream admissions per second (hub.accept_rate): what keeps a keeper standing when a whole fleet
// reconnects at once (a keeper restart, a network back). Each new EventStream call takes one token
// from a bucket refilled at `perSecond` and holding at most `burst`; with the bucket empty the call
// is refused before it costs a registry read, a lease or a session, and the soul is told when to come
// back. Those answers are slots spaced 1/perSecond apart after the ones already handed out, so N souls
// refused at the same instant come back spread over N/perSecond seconds instead of together.
// Kept in this keeper's memory: it protects this process; each keeper of a fleet has its own budget.
export interface AcceptRateOptions {
  perSecond: number;
  burst: number;
  /** The longest wait a soul is told (a slot further out is given this). */
  maxWaitMs?: number;
  now?: () => number;
}

export class AcceptRate {
  private tokens: number;
  private last: number;
  /** The latest slot handed to a refused soul (ms since the epoch of `now`). */
  private promised = 0;
  private readonly now: () => number;
  private readonly maxWaitMs: number;
  private readonly intervalMs: number;

  constructor(private readonly opts: AcceptRateOptions) {
    this.now = opts.now ?? Date.now;
    this.maxWaitMs = opts.maxWaitMs ?? 300_000;
    this.intervalMs = 1000 / opts.perSecond;
    this.tokens = opts.burst;
    this.last = this.now();
  }

  /** 0: open the stream now (a token was taken). Otherwise the milliseconds the soul should wait. */
  take(): number {
    const now = this.now();
    this.tokens = Math.min(this.opts.burst, this.tokens + ((now - this.last) / 1000) * this.opts.perSecond);
    this.last = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    // The first free slot is when the bucket holds a whole token again; later refusals queue behind it.
    const firstFree = now + (1 - this.tokens) * this.intervalMs;
    this.promised = Math.max(firstFree, this.promised + this.intervalMs);
    return Math.max(1, Math.min(this.maxWaitMs, Math.ceil(this.promised - now)));
  }
}

/** The `retry-after` metadata value: seconds, with millisecond precision ("0.25", "12.5"). */
export function retryAfterValue(ms: number): string {
  return String(Math.ceil(ms) / 1000);
}
