// /readyz: 200 only while the database, the cache and Temporal all answer; 503 (with Retry-After)
// otherwise, with each dependency's state in `checks`, so the answer says which one is down.
// Checked on each request, so it recovers by itself when a dependency returns. Temporal is in it
// because a keeper without it serves no run (issue 33).
import type { Request, Response } from 'express';
import { dbAnswers } from '../db/connect';
import { cacheAnswers, type Cache } from '../platform/cache';
import type { Knex } from 'knex';
import type { Metrics } from '../platform/metrics';

export function readinessHandler(db: Knex, cache: Cache, metrics: Metrics, temporalAnswers: () => Promise<boolean>) {
  return async (_req: Request, res: Response): Promise<void> => {
    const [database, cacheUp, temporal] = await Promise.all([dbAnswers(db), cacheAnswers(cache), temporalAnswers()]);
    const up = { database, cache: cacheUp, temporal };
    for (const [dependency, ok] of Object.entries(up)) metrics.ready.set({ dependency }, ok ? 1 : 0);
    const ready = database && cacheUp && temporal;
    const checks = Object.fromEntries(Object.entries(up).map(([d, ok]) => [d, ok ? 'up' : 'down']));
    const body = { status: ready ? 'ready' : 'not ready', checks };
    if (ready) {
      res.status(200).json(body);
    } else {
      res.status(503).set('Retry-After', '5').json(body);
    }
  };
}
