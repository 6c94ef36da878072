// A held answer checks its caller again while it is held (issue 45). Authentication runs once per
// request (api/auth.ts), but an event stream lives up to 10 minutes and a `?wait=` up to 60 s (also
// through MCP, whose tools call the same handlers): without a second look, a token revoked, an
// operator removed or demoted after the stream opened went on being served. So every
// STANDING_CHECK_MS a held answer reads the operator's standing as a new request would (same rules,
// api/auth.ts refusedToken, plus the token's expiry and the route's permission against the role
// now) and ends once it is refused: an event stream with `event: error` naming the reason, a wait
// with the problem (401, 403) a new request would get.
import type { Request, Response } from 'express';
import type { ArchonAccess } from '../db/repos/archons';
import { accessReader, refusedToken } from './auth';
import type { TickBatcher } from './batch';
import type { ApiDeps } from './deps';
import { ApiProblem, problems } from './problems';
import { permissionsOf, permits } from './roles';
import type { Caller } from './route';

/** The problem of a caller refused while its answer was held (MCP answers it as a protocol error). */
export class CallerRefused extends ApiProblem {
  constructor(p: ApiProblem) {
    super(p.status, p.kind, p.detail, p.extra);
    this.name = 'CallerRefused';
  }
}

/** How often a held stream or wait reads its caller's standing: a revoked token is served at most this much longer. */
export const STANDING_CHECK_MS = 2_000;

// One batching reader per keeper (per API deps): the checks of many streams in one turn are one query.
const readers = new WeakMap<ApiDeps, TickBatcher<string, ArchonAccess>>();
function reader(deps: ApiDeps): TickBatcher<string, ArchonAccess> {
  let r = readers.get(deps);
  if (!r) readers.set(deps, (r = accessReader(deps.runtime.db)));
  return r;
}

/**
 * The problem a new request of `caller` for a route needing `permission` would get now, or null
 * while it would be served. A caller without token claims (built inside the keeper, not from a
 * request) is checked for existence, removal and role only.
 */
export async function callerRefusal(deps: ApiDeps, caller: Caller, permission: string): Promise<ApiProblem | null> {
  const { aid } = caller;
  if (caller.token !== undefined && Date.now() >= caller.token.expiresAtMs)
    return problems.unauthorized(
      `the token of operator ${aid} expired at ${new Date(caller.token.expiresAtMs).toISOString()}; sign in again`,
    );
  const a = await reader(deps).get(aid);
  // No iat to compare: +Infinity is never before a revocation, so only removal and jti decide.
  const refused = refusedToken(aid, caller.token?.iat ?? Number.POSITIVE_INFINITY, caller.jti ?? null, a);
  if (refused !== null) return problems.unauthorized(refused);
  if (!permits(permissionsOf(a!.role), permission))
    return problems.forbidden(`operator ${aid} (now role ${a!.role}) lacks the permission ${permission}`, permission);
  return null;
}

/** callerRefusal, where a failed read is a refusal too: a held answer is not served unchecked. */
async function standing(deps: ApiDeps, caller: Caller, permission: string): Promise<CallerRefused | null> {
  let refusal: ApiProblem | null;
  try {
    refusal = await callerRefusal(deps, caller, permission);
  } catch {
    refusal = new ApiProblem(
      503,
      'unavailable',
      "the keeper could not check the caller's token (its database did not answer); reconnect",
    );
  }
  return refusal === null ? null : new CallerRefused(refusal);
}

/**
 * Checks `caller` every `everyMs` while a Server-Sent Events answer is open (api/mount.ts calls it
 * around every stream route). Once refused it sends `event: error` with `{status, type, detail}` and
 * ends the response; the request then closes, which is what every stream loop stops on (and gives
 * its operator slot back). Returns the function that stops the checks when the stream ended.
 */
export function guardStream(
  deps: ApiDeps,
  caller: Caller,
  permission: string,
  req: Request,
  res: Response,
  everyMs = STANDING_CHECK_MS,
): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const stop = () => {
    stopped = true;
    clearTimeout(timer);
  };
  req.once('close', stop);
  const check = async () => {
    const refusal = await standing(deps, caller, permission);
    if (stopped || res.writableEnded) return;
    if (refusal === null) {
      timer = setTimeout(() => void check(), everyMs);
      return;
    }
    stop();
    const { status, type, detail } = refusal.body();
    deps.runtime.log.info('stream closed: its caller is no longer served', {
      aid: caller.aid,
      status,
      route: res.locals.route as string | undefined,
    });
    res.end(`event: error\ndata: ${JSON.stringify({ status, type, detail })}\n\n`);
  };
  timer = setTimeout(() => void check(), everyMs);
  return stop;
}

/**
 * For a long poll (`?wait=`): the function its loop calls on every turn. It reads the caller's
 * standing at most every `everyMs` (the first time `everyMs` after the wait began) and throws the
 * problem a new request would get once the caller is refused.
 */
export function standingChecker(deps: ApiDeps, caller: Caller, permission: string, everyMs = STANDING_CHECK_MS) {
  let next = Date.now() + everyMs;
  return async (): Promise<void> => {
    if (Date.now() < next) return;
    next = Date.now() + everyMs;
    const refusal = await standing(deps, caller, permission);
    if (refusal !== null) throw refusal;
  };
}
