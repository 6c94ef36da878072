// A keeper at its accept rate (hub.accept_rate) refuses a new stream with RESOURCE_EXHAUSTED and a
// `retry-after` (seconds) naming the slot it keeps for this soul. The soul waits at least that long,
// plus a jitter of up to a fifth of it (at most 2 s), so souls given neighbouring slots do not
// arrive together; it never gives up: a busy keeper is a live one.
import { GrpcStatus } from './grpc-stream';

/** The keeper's hint in milliseconds, when the status is a load refusal that carries one. */
export function busyRetryAfterMs(
  code: number | undefined,
  metadata: Record<string, string> | undefined,
): number | undefined {
  if (code !== GrpcStatus.RESOURCE_EXHAUSTED || !metadata) return undefined;
  const v = metadata['retry-after'];
  const seconds = typeof v === 'string' ? Number(v) : NaN;
  // A malformed or absurd hint is ignored (the ordinary backoff applies); one hour bounds a typo.
  if (!Number.isFinite(seconds) || seconds < 0 || seconds > 3600) return undefined;
  return Math.round(seconds * 1000);
}

/** How long to wait after a busy answer: the hint, then up to min(hint/5, 2 s) more. */
export function busyDelay(hintMs: number, random: () => number = Math.random): number {
  return Math.round(hintMs + random() * Math.min(hintMs / 5, 2000));
}
