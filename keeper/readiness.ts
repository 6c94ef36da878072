// /readyz: 200 only while the database and the cache both answer; 503 (with Retry-After) otherwise.
// Checked on each request, so it recovers by itself when a dependency returns.
import type { Request, Response } from 'express';
import { dbAnswers } from '../db/connect';
import { cacheAnswers, type Cache } from '../platform/cache';
import type { Knex } from 'knex';
import type { Metrics } from '../platform/metrics';

export function readinessHandler(db: Knex, cache: Cache, metrics: Metrics) {
  return async (_req: Request, res: Response): Promise<void> => {
    const [database, cacheUp] = await Promise.all([dbAnswers(db), cacheAnswers(cache)]);
    metrics.ready.set({ dependency: 'database' }, database ? 1 : 0);
    metrics.ready.set({ dependency: 'cache' }, cacheUp ? 1 : 0);
    const body = { status: database && cacheUp ? 'ready' : 'not ready', checks: { database: database ? 'up' : 'down', cache: cacheUp ? 'up' : 'down' } };
    if (database && cacheUp) {
      res.status(200).json(body);
    } else {
      res.status(503).set('Retry-After', '5').json(body);
    }
  };
}
