// /readyz, as the interface spec defines it: 200 when the instance is ready to take traffic, that is
// started, with the database and the cache answering (the spec's minimum core); 503 (with
// Retry-After) otherwise. Temporal and the secrets store do not decide it: without Temporal the keeper
// still serves souls, the registry, operators and onboarding and refuses runs with a 503 naming it;
// without the store it serves everything that needs no secret (issue 45). Taking a keeper out of a
// load balancer for either would drop every keeper at once, since they share both. They are reported
// instead: `checks` has every dependency's state, `degraded` lists the ones down that do not decide
// readiness, and `keeper_dependency_up{dependency}` carries each. Checked on each request, so the
// answer recovers by itself when a dependency returns.
import type { Request, Response } from 'express';
import { dbAnswers } from '../db/connect';
import { cacheAnswers, type Cache } from '../platform/cache';
import type { Knex } from 'knex';
import type { Metrics } from '../platform/metrics';

export interface ReadinessOptions {
  temporalAnswers: () => Promise<boolean>;
  secretStoreAnswers: () => Promise<boolean>;
  /** False until every component of the keeper has started: a keeper still starting takes no traffic. */
  started: () => boolean;
  /** Details that do not decide readiness (the service sources this keeper cannot reach). */
  details?: () => Record<string, unknown>;
}

export function readinessHandler(db: Knex, cache: Cache, metrics: Metrics, opts: ReadinessOptions) {
  return async (_req: Request, res: Response): Promise<void> => {
    const [database, cacheUp, temporal, secretstore] = await Promise.all([
      dbAnswers(db),
      cacheAnswers(cache),
      opts.temporalAnswers(),
      opts.secretStoreAnswers(),
    ]);
    const up = { database, cache: cacheUp, temporal, secretstore };
    for (const [dependency, ok] of Object.entries(up)) metrics.ready.set({ dependency }, ok ? 1 : 0);
    const started = opts.started();
    const ready = started && database && cacheUp;
    const checks = Object.fromEntries(Object.entries(up).map(([d, ok]) => [d, ok ? 'up' : 'down']));
    const degraded = Object.entries({ temporal, secretstore })
      .filter(([, ok]) => !ok)
      .map(([d]) => d);
    const status = ready ? 'ready' : started ? 'not ready' : 'starting';
    const body = { status, checks, degraded, ...(opts.details?.() ?? {}) };
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
