// Fresh facts on request (`keeperctl souls list --refresh`, GET /v1/souls?refresh=true; docs/executions.md).
// The keeper answering the query does not hold most streams, so it asks every keeper at once on one
// Redis channel; each keeper sends refresh_facts to the souls whose streams it holds, waits for their
// Facts to be written to the registry, and names each such SID on the request's own reply channel.
// The asking keeper then reads the registry: what it answers is what the souls just reported. A soul
// that does not answer in time (busy, an older soul, its keeper away) keeps its stored facts and age.
import { randomUUID } from 'node:crypto';
import type { Logger } from '../common/logger';
import type { Cache } from '../platform/cache';
import type { Component } from '../platform/component';
import type { Sessions } from './sessions';

export const REFRESH_CHANNEL = 'keeper:souls:refresh-facts';
const replyChannel = (id: string) => `keeper:souls:facts-refreshed:${id}`;

interface RefreshRequest {
  id: string;
  sids: string[];
  timeout_ms: number;
}

/**
 * Asks the souls (on whichever keeper holds them) for their facts and resolves with the SIDs whose
 * fresh facts are in the registry, once all answered or after `timeoutMs`.
 */
export async function refreshFacts(cache: Cache, sids: string[], timeoutMs: number): Promise<Set<string>> {
  const answered = new Set<string>();
  if (sids.length === 0) return answered;
  const wanted = new Set(sids);
  const id = randomUUID();
  // A subscribed connection can do nothing else: one of its own for this request, subscribed before
  // the request is published so no answer is missed.
  const sub = cache.duplicate();
  sub.on('error', () => {
    /* the request ends at its timeout; the main connection logs cache trouble */
  });
  await sub.connect();
  try {
    let done!: () => void;
    const all = new Promise<void>((resolve) => {
      done = resolve;
    });
    await sub.subscribe(replyChannel(id), (sid: string) => {
      if (!wanted.has(sid)) return;
      answered.add(sid);
      if (answered.size === wanted.size) done();
    });
    const request: RefreshRequest = { id, sids, timeout_ms: timeoutMs };
    await cache.publish(REFRESH_CHANNEL, JSON.stringify(request));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
  } finally {
    await sub.quit().catch(() => undefined);
  }
  return answered;
}

/** Each keeper: asks the souls it holds when a refresh names them, and says which answered. */
export function factsRefreshListener(cache: Cache, sessions: Sessions, log: Logger): Component {
  let sub: Cache | undefined;
  return {
    name: 'facts refresh listener',
    async start() {
      sub = cache.duplicate();
      sub.on('error', () => {
        /* reconnects by itself; the main connection logs cache trouble */
      });
      await sub.connect();
      await sub.subscribe(REFRESH_CHANNEL, (message: string) => {
        let req: RefreshRequest;
        try {
          req = JSON.parse(message) as RefreshRequest;
        } catch {
          return;
        }
        if (typeof req.id !== 'string' || !Array.isArray(req.sids)) return;
        // Answered a little before the asker stops waiting, so a late answer is not lost on the way.
        const wait = Math.max(100, Math.min(60_000, Number(req.timeout_ms) || 0) - 250);
        for (const sid of req.sids) {
          if (typeof sid !== 'string' || !sessions.isConnected(sid)) continue;
          void sessions.refreshFacts(sid, wait).then((recorded) => {
            if (!recorded) return;
            cache.publish(replyChannel(req.id), sid).catch((err: Error) => {
              log.warn('cannot report refreshed facts', { sid, error: err.message });
            });
          });
        }
      });
    },
    async stop() {
      await sub?.quit().catch(() => undefined);
    },
  };
}
