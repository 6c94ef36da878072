// The Operator API (express). Placeholder for the foundation: default deny on every /v1 route until
// the API layer lands. Replaced wholesale by the API issue.
import express from 'express';
import type { Metrics } from '../keeper/metrics';
import type { RuntimeWithCache } from '../keeper/runtime';

export interface ApiDeps { runtime: RuntimeWithCache; metrics: Metrics }

export function createApiApp(_deps: ApiDeps): express.Router {
  const router = express.Router();
  router.use('/v1', (_req, res) => {
    res.status(403).type('application/problem+json').json({ type: 'about:blank', title: 'Forbidden', status: 403, detail: 'no route is permitted yet' });
  });
  return router;
}
