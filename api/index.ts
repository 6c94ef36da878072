// The Operator API (issue 3): /openapi.json, /docs and every /v1 route from the route table.
// For /v1 the chain is: metrics and no-store -> registry gate (403) -> authentication (401) ->
// per route: permission (403), body (413/415/400), validation (400), handler -> 404/405 -> problem.
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from '../common/logger';
import { VERSION } from '../common/version';
import { activityRecorder } from './activity';
import { authenticate, registryGate } from './auth';
import type { ApiDeps } from './deps';
import { mountDocs } from './docs';
import { checkRouteTable, mountRoutes } from './mount';
import { buildOpenApiDocument } from './openapi';
import { problems, sendProblem, toProblem } from './problems';
import { operatorRateLimit } from './rate-limit';
import { allRoutes } from './routes';

export type { ApiDeps } from './deps';
export { allRoutes } from './routes';
export type { RouteDef, RouteContext, RouteResult, Caller } from './route';

/** Answers every error as a problem; logs server-side failures by name and message, never a stack. */
export function problemErrorHandler(log: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const problem = toProblem(err);
    if (problem.status >= 500) {
      const e = err as { name?: unknown; message?: unknown; code?: unknown };
      log.error('api request failed', {
        method: req.method,
        route: res.locals.route ?? 'unmatched',
        status: problem.status,
        error_name: String(e?.name ?? 'unknown'),
        error: String(e?.message ?? err),
        code: e?.code,
      });
    }
    sendProblem(res, problem);
  };
}

/** The last handlers of the Operator API listener: 404 and error answers as problems for any path. */
export function createApiFallback(log: Logger): express.Router {
  const router = express.Router();
  router.use((req: Request, _res: Response, next: NextFunction) =>
    next(problems.notFound(`nothing is served at ${req.method} ${req.path}`)),
  );
  router.use(problemErrorHandler(log));
  return router;
}

function observe(deps: ApiDeps) {
  const { metrics, runtime } = deps;
  return (req: Request, res: Response, next: NextFunction): void => {
    const start = process.hrtime.bigint();
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.on('finish', () => {
      const route: string = res.locals.route ?? 'unmatched';
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      metrics.httpRequests.inc({ method: req.method, route, status: String(res.statusCode) });
      metrics.httpDuration.observe({ method: req.method, route }, seconds);
      runtime.log.debug('api request', {
        method: req.method,
        route,
        status: res.statusCode,
        ms: Math.round(seconds * 1000),
        aid: res.locals.caller?.aid,
      });
    });
    next();
  };
}

export function createApiApp(deps: ApiDeps): express.Router {
  checkRouteTable(allRoutes);
  const { runtime } = deps;
  // Strict routing: /v1/souls/ is not /v1/souls, so a trailing slash never reaches another route.
  const router = express.Router({ strict: true });
  mountDocs(router, buildOpenApiDocument(allRoutes, { version: VERSION }));
  router.use(
    '/v1',
    observe(deps),
    registryGate(runtime.db),
    authenticate(runtime.db, runtime.signingKey, runtime.config.auth.jwt.issuer),
    activityRecorder(deps),
    operatorRateLimit(deps).middleware(),
  );
  mountRoutes(router, allRoutes, deps);
  router.use('/v1', (req: Request, _res: Response, next: NextFunction) =>
    next(problems.notFound(`no route ${req.method} ${req.originalUrl.split('?')[0]}`)),
  );
  router.use('/v1', problemErrorHandler(runtime.log));
  return router;
}
