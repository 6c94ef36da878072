// How long a soul waits after a stream it held is lost (agent/run.ts), before it tries its endpoints
// again from the preferred one.
//
// A stream that had been healthy and ends is almost always its keeper going away: a SIGKILLed or
// crashed keeper's kernel resets the connection, so the soul knows at once, and every second it then
// waits is a second its hosts' runs wait too (issue 33: a killed keeper's run ends within seconds).
// So the first attempt goes almost at once: a jitter of at most QUICK_JITTER_MS, which spreads a
// fleet over a few heartbeats of the keeper it moves to; a whole fleet arriving together is metered
// by that keeper's accept rate (hub/accept-rate.ts: a slot and a retry-after for each soul beyond
// it), not by the souls' waiting. The round starts with the preferred endpoint again: a dead keeper
// refuses in the same instant (its port is closed), a live one keeps its souls after a blip.
// The backoff (agent/backoff.ts) grows only when that round fails too, or when streams keep ending
// young (a keeper that accepts and drops), so a flapping keeper is not hammered.
import type { GoodbyeReason } from '../proto/types';
import type { Backoff } from './backoff';

/** A session that lasted this long counts as healthy: its loss is met by a quick reconnect. */
export const STABLE_MS = 10_000;
/** The most a quick reconnect waits (a uniform jitter). */
export const QUICK_JITTER_MS = 100;
/** A keeper that says goodbye{shutdown} wants its souls elsewhere now: spread over half a second. */
export const SHUTDOWN_JITTER_MS = 500;

export function delayAfterLoss(
  end: { durationMs: number; goodbye?: GoodbyeReason },
  backoff: Backoff,
  random: () => number = Math.random,
): number {
  if (end.goodbye === 'shutdown') return Math.round(random() * SHUTDOWN_JITTER_MS);
  if (end.durationMs < STABLE_MS) return backoff.next();
  backoff.reset();
  // 1 to QUICK_JITTER_MS: never 0, which agent/run.ts keeps for a reconnect that is no loss (a rotation).
  return 1 + Math.floor(random() * QUICK_JITTER_MS);
}
