// Turns the route table into express handlers. The table is checked first: a route without a
// permission (or with one outside the grammar), a duplicate, or a path whose `{params}` do not match
// its params schema stops the keeper at startup, so no route can be reached unguarded.
import type { NextFunction, Request, Response, Router } from 'express';
import { PERMISSION_PATTERN } from './roles';
import { checkPermission } from './auth';
import { guardStream } from './stream-auth';
import { jsonBody } from './body';
import type { ApiDeps } from './deps';
import { problems } from './problems';
import type { Caller, RouteDef } from './route';
import { compileQueryValidator, compileValidator, fieldErrors } from './validate';

export class RouteTableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RouteTableError';
  }
}

export function pathParamNames(path: string): string[] {
  return [...path.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]);
}

export function toExpressPath(path: string): string {
  return path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, ':$1');
}

/** Throws RouteTableError for the first route that must not be served. */
export function checkRouteTable(routes: readonly RouteDef[]): void {
  const seen = new Set<string>();
  for (const r of routes) {
    const name = `${String(r.method).toUpperCase()} ${r.path}`;
    if (typeof r.permission !== 'string' || r.permission === '') {
      throw new RouteTableError(
        `${name} declares no permission; every /v1 route must declare the permission it needs (default deny)`,
      );
    }
    if (!PERMISSION_PATTERN.test(r.permission))
      throw new RouteTableError(`${name}: permission "${r.permission}" is not <resource>:<action>`);
    if (!r.path.startsWith('/v1/')) throw new RouteTableError(`${name}: Operator API routes live under /v1/`);
    if (seen.has(name)) throw new RouteTableError(`${name} is declared twice`);
    seen.add(name);
    const declared = Object.keys(r.params?.properties ?? {}).sort();
    const inPath = pathParamNames(r.path).sort();
    if (declared.join(',') !== inPath.join(',')) {
      throw new RouteTableError(
        `${name}: path parameters {${inPath.join(',')}} and the params schema (${declared.join(',')}) differ`,
      );
    }
    if (typeof r.handler !== 'function') throw new RouteTableError(`${name} has no handler`);
  }
}

function runner(route: RouteDef, deps: ApiDeps) {
  const vParams = route.params ? compileValidator(route.params, 'path') : undefined;
  const vQuery = route.query ? compileQueryValidator(route.query) : undefined;
  const vBody = route.body ? compileValidator(route.body.schema, 'body') : undefined;
  return async (req: Request, res: Response): Promise<void> => {
    const caller = res.locals.caller as Caller;
    const params: Record<string, unknown> = { ...req.params };
    if (vParams && !vParams(params))
      throw problems.invalid('a path parameter is not valid', fieldErrors('path', vParams.errors));
    const query: Record<string, unknown> = { ...(req.query as Record<string, unknown>) };
    const queryErrors = vQuery ? vQuery(query) : [];
    if (queryErrors.length > 0) throw problems.invalid('a query parameter is not valid', queryErrors);
    if (!vQuery && Object.keys(query).length > 0) {
      throw problems.invalid(
        'this route takes no query parameters',
        Object.keys(query)
          .slice(0, 20)
          .map((k) => ({ path: `/query/${k}`, message: 'is not a known parameter here' })),
      );
    }
    let body: unknown = res.locals.body;
    if (route.body && vBody) {
      if (body === undefined && route.body.required)
        throw problems.invalid('this route needs a JSON body', [{ path: '/body', message: 'is required' }]);
      if (body !== undefined && !vBody(body))
        throw problems.invalid('the request body is not valid', fieldErrors('body', vBody.errors));
    } else if (body !== undefined) {
      throw problems.invalid('this route takes no request body', [{ path: '/body', message: 'must be absent' }]);
    }
    const result = await route.handler({ params, query, body, caller, deps });
    for (const [k, v] of Object.entries(result.headers ?? {})) res.setHeader(k, v);
    if (result.stream) {
      res.statusCode = result.status;
      // A stream outlives its request's authentication: its caller is checked again while it is open.
      const unguard = guardStream(deps, caller, route.permission, req, res);
      try {
        await result.stream(res, req);
      } finally {
        unguard();
      }
      return;
    }
    sendJson(res, result.status, result.body);
  };
}

/**
 * What `res.json` sends, minus its per-response ETag (a hash of the whole body): every /v1 answer is
 * `Cache-Control: no-store`, so no client can ever revalidate with it. One stringify, one write.
 */
export function sendJson(res: Response, status: number, body: unknown): void {
  res.statusCode = status;
  // The activity stream reads the apply_id of a run or plan the call started from it (api/activity.ts).
  res.locals.answer = body;
  if (status === 204 || status === 304 || body === undefined) {
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/**
 * The path a call reached, as the activity stream records it: the route's own template with its
 * parameters filled in as the router decoded them. The URL as sent is not canonical (the router
 * matches `/V1/souls/%77eb` to `/v1/souls/{sid}` as `web`), and a row recorded under the URL as sent
 * would hide from a `target` filter for `/v1/souls/web`.
 */
export function canonicalPath(template: string, params: Record<string, string | undefined>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => params[name] ?? whole);
}

/** Mounts every route (after authentication) with: permission check, body, validation, handler; 405 for other methods. */
export function mountRoutes(router: Router, routes: readonly RouteDef[], deps: ApiDeps): void {
  checkRouteTable(routes);
  const methodsByPath = new Map<string, string[]>();
  for (const route of routes) {
    const run = runner(route, deps);
    const path = toExpressPath(route.path);
    methodsByPath.set(path, [...(methodsByPath.get(path) ?? []), route.method.toUpperCase()]);
    const handlers = [
      (req: Request, res: Response, next: NextFunction) => {
        res.locals.route = route.path;
        res.locals.target = canonicalPath(route.path, req.params as Record<string, string>);
        checkPermission(res.locals.caller as Caller, route.permission);
        next();
      },
      ...(route.method === 'get' ? [] : [jsonBody]),
      (req: Request, res: Response) => run(req, res),
    ];
    router[route.method](path, ...handlers);
  }
  for (const [path, methods] of methodsByPath) {
    const allow = methods.includes('GET') ? [...methods, 'HEAD'] : methods;
    router.all(path, (_req: Request, _res: Response, next: NextFunction) => next(problems.methodNotAllowed(allow)));
  }
}
