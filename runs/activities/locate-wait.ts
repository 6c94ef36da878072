// Where souls are, waiting a little for those that were connected a moment ago. A host handed back as
// `moved` had a stream when its dispatch began; when the keeper that held it was killed, the soul
// reconnects after its backoff (agent/backoff.ts: up to 16 s a step early on), which can be later
// than the retried dispatch's own grace. Re-routing such hosts waits up to `waitMs` for them to
// appear on some keeper, so a keeper restart does not turn connected hosts into `unknown`.
// A first routing (locateFirst) waits only for souls seen connected within the last minute, at most
// FIRST_ROUTE_WAIT_MS: right after a keeper restart every soul is reconnecting (its backoff, 1-8 s
// measured under load), and a run started at once would otherwise call them all `unknown`. A host
// long gone is `unknown` at once, as before: a dead host costs a run no wait.
import { Context } from '@temporalio/activity';
import type { LocateSouls } from './deps';

const POLL_MS = 250;

/** How long a run's first routing waits for souls that were connected moments ago (docs/runs.md). */
export const FIRST_ROUTE_WAIT_MS = 10_000;
/** "Moments ago": last seen connected this recently (a live stream's last_seen_at moves every 30 s). */
export const RECENTLY_CONNECTED_MS = 60_000;

/**
 * A first routing: where souls are now; those not found but seen connected within
 * RECENTLY_CONNECTED_MS (`recent`) are waited for, up to FIRST_ROUTE_WAIT_MS; the rest are not.
 */
export async function locateFirst(
  locate: LocateSouls,
  recent: (sids: string[]) => Promise<Set<string>>,
  sids: string[],
): Promise<(string | null)[]> {
  const kids = await locate(sids);
  const missing = sids.filter((_, i) => !kids[i]);
  if (missing.length === 0) return kids;
  const back = [...(await recent(missing))];
  if (back.length === 0) return kids;
  const found = await locateWaiting(locate, back, FIRST_ROUTE_WAIT_MS);
  const at = new Map(back.map((sid, i) => [sid, found[i] ?? null]));
  return kids.map((k, i) => k ?? at.get(sids[i]!) ?? null);
}

export async function locateWaiting(locate: LocateSouls, sids: string[], waitMs: number): Promise<(string | null)[]> {
  let kids = await locate(sids);
  const deadline = Date.now() + waitMs;
  while (kids.some((k) => !k) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, POLL_MS));
    heartbeat();
    const missing = sids.filter((_, i) => !kids[i]);
    const found = await locate(missing);
    let j = 0;
    kids = kids.map((k) => k ?? found[j++] ?? null);
  }
  return kids;
}

function heartbeat(): void {
  let ctx: Context;
  try {
    ctx = Context.current();
  } catch {
    return; // Called outside an activity (unit tests): nothing to report to.
  }
  // A run's first routing is a local activity (runs/workflows/run.ts): Temporal has no heartbeat for
  // those and the SDK logged "Activity heartbeat failed ... UnknownActivity" four times a second of
  // the wait; its workflow task is kept alive by the SDK instead.
  if (!ctx.info.isLocal) ctx.heartbeat('waiting for souls to reconnect');
}
