// Where souls are, waiting a little for those that were connected a moment ago. A host handed back as
// `moved` had a stream when its dispatch began; when the keeper that held it was killed, the soul
// reconnects after its backoff (agent/backoff.ts: up to 16 s a step early on), which can be later
// than the retried dispatch's own grace. Re-routing such hosts waits up to `waitMs` for them to
// appear on some keeper, so a keeper restart does not turn connected hosts into `unknown`. A first
// routing never waits: a host that is simply down is `unknown` at once, as before.
import { Context } from '@temporalio/activity';
import type { LocateSouls } from './deps';

const POLL_MS = 250;

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
  try {
    Context.current().heartbeat('waiting for souls to reconnect');
  } catch {
    // Called outside an activity (unit tests): nothing to report to.
  }
}
