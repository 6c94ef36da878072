// Failed bootstrap attempts per source address (auth.bootstrap_rate_limit): after `failures`
// failures within `window`, further attempts from that source are refused until the window ends.
// Kept in this keeper's memory: tokens carry 256 random bits, so the limit is against noise and
// load, not guessing, and N keepers giving N times the budget changes nothing about that. Successes
// do not count; a source's window starts at its first failure.
export interface RateLimitOptions {
  failures: number;
  windowMs: number;
  now?: () => number;
  maxSources?: number;
}

export class FailureRateLimit {
  private readonly bySource = new Map<string, { count: number; resetAt: number }>();
  private readonly now: () => number;
  private readonly maxSources: number;

  constructor(private readonly opts: RateLimitOptions) {
    this.now = opts.now ?? Date.now;
    this.maxSources = opts.maxSources ?? 100_000;
  }

  /** Milliseconds until the source may try again; 0 when it may try now. */
  retryAfterMs(source: string): number {
    const e = this.bySource.get(source);
    if (!e) return 0;
    const left = e.resetAt - this.now();
    if (left <= 0) {
      this.bySource.delete(source);
      return 0;
    }
    return e.count >= this.opts.failures ? left : 0;
  }

  recordFailure(source: string): void {
    const now = this.now();
    const e = this.bySource.get(source);
    if (!e || e.resetAt <= now) {
      if (this.bySource.size >= this.maxSources) this.evictExpired(now);
      this.bySource.set(source, { count: 1, resetAt: now + this.opts.windowMs });
    } else {
      e.count += 1;
    }
  }

  private evictExpired(now: number): void {
    for (const [k, e] of this.bySource) if (e.resetAt <= now) this.bySource.delete(k);
    // Still full: forget the oldest entries rather than grow without bound under a flood of sources.
    for (const k of this.bySource.keys()) {
      if (this.bySource.size < this.maxSources) break;
      this.bySource.delete(k);
    }
  }
}

/** The source address of a gRPC peer string: "ipv4:1.2.3.4:5", "ipv6:[::1]:5", "1.2.3.4:5". */
export function sourceOf(peer: string): string {
  const p = peer.replace(/^ipv[46]:/, '');
  const bracket = /^\[([^\]]+)\]/.exec(p);
  if (bracket) return bracket[1]!;
  const i = p.lastIndexOf(':');
  return i > 0 && p.indexOf(':') === i ? p.slice(0, i) : p;
}
