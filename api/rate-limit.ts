// A request rate limit per operator: one token bucket per AID, refilled at `requests_per_second` and
// holding at most `burst` (config `api.rate_limit`). A script that floods the API gets 429 with
// Retry-After instead of slowing every other operator down. Buckets live in this keeper's memory:
// behind N keepers an operator gets up to N times the rate (docs/api.md says so); an idle bucket is
// full, so it is dropped instead of kept.
import type { NextFunction, Request, Response } from 'express';
import type { ApiDeps } from './deps';
import { ApiProblem } from './problems';
import type { Caller } from './route';

interface Bucket {
  tokens: number;
  at: number;
}

export class OperatorRateLimit {
  private readonly buckets = new Map<string, Bucket>();
  private sweptAt = 0;

  constructor(
    private readonly rate: number,
    private readonly burst: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes one token for `aid`; returns 0 when it may go on, else the seconds until a token is back. */
  take(aid: string): number {
    const t = this.now();
    const b = this.buckets.get(aid) ?? { tokens: this.burst, at: t };
    b.tokens = Math.min(this.burst, b.tokens + ((t - b.at) / 1000) * this.rate);
    b.at = t;
    this.buckets.set(aid, b);
    this.sweep(t);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / this.rate));
  }

  private sweep(t: number): void {
    if (t - this.sweptAt < 60_000) return;
    this.sweptAt = t;
    const full = (this.burst / this.rate) * 1000;
    for (const [aid, b] of this.buckets) if (t - b.at > full) this.buckets.delete(aid);
  }

  /** What a refused call is told (the API's 429 detail, MCP's error message). */
  refusal(aid: string, wait: number): string {
    return `operator ${aid} sent more than ${this.rate} requests per second (bursts up to ${this.burst}); retry after ${wait} s`;
  }

  middleware() {
    return (_req: Request, res: Response, next: NextFunction): void => {
      const caller = res.locals.caller as Caller | undefined;
      if (!caller) {
        next();
        return;
      }
      const wait = this.take(caller.aid);
      if (wait === 0) {
        next();
        return;
      }
      next(
        new ApiProblem(429, 'rate-limited', this.refusal(caller.aid, wait), {
          headers: { 'Retry-After': String(wait) },
        }),
      );
    };
  }
}

// One limit per keeper (per API deps), shared by the Operator API and MCP tool calls: an operator
// gets one budget whichever listener it calls, not one per listener.
const limits = new WeakMap<ApiDeps, OperatorRateLimit>();
export function operatorRateLimit(deps: ApiDeps): OperatorRateLimit {
  let l = limits.get(deps);
  if (!l) {
    const { requests_per_second, burst } = deps.runtime.config.api.rate_limit;
    limits.set(deps, (l = new OperatorRateLimit(requests_per_second, burst)));
  }
  return l;
}
