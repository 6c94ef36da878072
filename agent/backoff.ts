// Reconnect delays: exponential from `initialMs` to `maxMs`, each drawn uniformly from the upper
// half of the current step ("equal jitter"), so a keeper restart is not met by every soul at the
// same instant, yet no soul waits less than half the step.
export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  random?: () => number;
}

export class Backoff {
  private attempt = 0;
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly random: () => number;

  constructor(opts: BackoffOptions = {}) {
    this.initialMs = opts.initialMs ?? 500;
    this.maxMs = opts.maxMs ?? 30_000;
    this.random = opts.random ?? Math.random;
  }

  next(): number {
    const step = Math.min(this.maxMs, this.initialMs * 2 ** this.attempt);
    this.attempt = Math.min(this.attempt + 1, 30);
    return Math.round(step / 2 + this.random() * (step / 2));
  }

  reset(): void {
    this.attempt = 0;
  }
}
