// /readyz: 200 only while the database, the cache, Temporal and the secrets store all answer; 503
// (with Retry-After) otherwise, with each dependency's state in `checks`, so the answer says which
// one is down. Checked on each request, so it recovers by itself when a dependency returns. Temporal
// is in it because a keeper without it serves no run, the secrets store because a sealed or absent
// store stops onboarding, scenario secrets and credential_refs (issue 33).
import type { Request, Response } from 'express';
import { dbAnswers } from '../db/connect';
import { cacheAnswers, type Cache } from '../platform/cache';
import type { Knex } from 'knex';
import type { Metrics } from '../platform/metrics';

export function readinessHandler(
  db: Knex,
  cache: Cache,
  metrics: Metrics,
  temporalAnswers: () => Promise<boolean>,
  secretStoreAnswers: () => Promise<boolean>,
  /** Details that do not decide readiness (the service sources this keeper cannot reach). */
  details: () => Record<string, unknown> = () => ({}),
) {
  return async (_req: Request, res: Response): Promise<void> => {
    const [database, cacheUp, temporal, secretstore] = await Promise.all([
      dbAnswers(db),
      cacheAnswers(cache),
      temporalAnswers(),
      secretStoreAnswers(),
    ]);
    const up = { database, cache: cacheUp, temporal, secretstore };
    for (const [dependency, ok] of Object.entries(up)) metrics.ready.set({ dependency }, ok ? 1 : 0);
    const ready = database && cacheUp && temporal && secretstore;
    const checks = Object.fromEntries(Object.entries(up).map(([d, ok]) => [d, ok ? 'up' : 'down']));
    const body = { status: ready ? 'ready' : 'not ready', checks, ...details() };
    if (ready) {
      res.status(200).json(body);
    } else {
      res.status(503).set('Retry-After', '5').json(body);
    }
  };
}

/**
 * Whether the secrets store at `addr` is initialised and unsealed, asked within 2 s. sys/health
 * needs no token (a sealed store has none to check); `standbyok` counts a standby node of an HA
 * store as up, since it forwards requests to the active one.
 */
export async function secretStoreAnswers(addr: string): Promise<boolean> {
  try {
    const res = await fetch(`${addr.replace(/\/+$/, '')}/v1/sys/health?standbyok=true`, {
      signal: AbortSignal.timeout(2000),
    });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}
