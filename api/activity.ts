// The activity stream's one writer for the Operator API and MCP (docs/api.md "Activity"): every
// mutating call of an authenticated operator is appended, whatever its outcome (a 403 or 409 says
// who tried what), in one place rather than per route. Only the route, the path (names, never a
// body or query) and the status are kept, so no secret input can reach the stream.
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../common/logger';
import { appendActivity, type NewActivity } from '../db/repos/activity';
import type { ApiDeps } from './deps';
import type { Caller } from './route';

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The run or plan an answer started, when it names one. */
export function applyIdOf(body: unknown): string | null {
  if (typeof body !== 'object' || body === null) return null;
  const b = body as Record<string, unknown>;
  for (const k of ['apply_id', 'plan_id']) if (typeof b[k] === 'string') return b[k] as string;
  const run = b.run as Record<string, unknown> | null | undefined;
  return run && typeof run.apply_id === 'string' ? run.apply_id : null;
}

/** The one-off execution an answer started (POST /v1/executions answers its id and its `execution` path). */
export function executionIdOf(body: unknown): string | null {
  if (typeof body !== 'object' || body === null) return null;
  const b = body as Record<string, unknown>;
  return typeof b.id === 'string' && b.execution === `/v1/executions/${b.id}` ? b.id : null;
}

/** Appends one row; a failure is logged (by name, never the row's content) and the answer still goes out. */
export async function recordActivity(deps: ApiDeps, row: NewActivity, log: Logger = deps.runtime.log): Promise<void> {
  try {
    await appendActivity(deps.runtime.db, row);
  } catch (err) {
    log.error('activity: a row could not be written', {
      action: row.action,
      error_name: String((err as Error)?.name ?? 'unknown'),
    });
  }
}

/**
 * Mounted after authentication. The row is written before the answer's last byte leaves, so a
 * client that has its answer finds its call in GET /v1/activity. Calls that reached no route (404
 * of an unknown path) are not changes and are not recorded.
 */
export function activityRecorder(deps: ApiDeps) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (READS.has(req.method)) return next();
    const end = res.end.bind(res) as (...a: unknown[]) => Response;
    let done = false;
    (res as { end: unknown }).end = (...args: unknown[]) => {
      const caller = res.locals.caller as Caller | undefined;
      const route = res.locals.route as string | undefined;
      if (done || !caller || route === undefined) return end(...args);
      done = true;
      void recordActivity(deps, {
        actor: caller.aid,
        actorKind: 'operator',
        jti: caller.jti ?? null,
        source: caller.source ?? null,
        via: 'api',
        action: `${req.method} ${route}`,
        // The canonical path (api/mount.ts canonicalPath), not the URL as sent: `/V1/...` or a
        // percent-encoded name must not hide from the target filter.
        target: (res.locals.target as string | undefined) ?? req.path,
        status: res.statusCode,
        applyId: applyIdOf(res.locals.answer),
        executionId: executionIdOf(res.locals.answer),
      }).finally(() => end(...args));
      return res;
    };
    next();
  };
}
