// Authentication and authorization for /v1 (interface spec 5; issue 3 item 2). The order is fixed:
//   1. registry gate: while no operator exists, every call is 403 (spec 5 rule 1);
//   2. authenticate: a bearer JWT verified with the pinned algorithm, issuer and expiry (401);
//   3. the caller's role is read from the archons table (a deleted operator gets 401), with the
//      moment its tokens were revoked (a token issued before it gets 401) and the ids of its tokens
//      revoked one by one (that token gets 401), at every keeper at once;
//   4. authorize: the route's permission against the role's permissions (403, default deny).
// Neither the token nor the Authorization header is ever logged or echoed.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { decodeJwt } from 'jose';
import type { Knex } from 'knex';
import { archonRegistryEmpty, getArchonAccess, type ArchonAccess } from '../db/repos/archons';
import { TokenRejected, tokenRevoked, verifyOperatorToken } from './jwt';
import { AID_PATTERN, permissionsOf, permits } from './roles';
import { TickBatcher } from './batch';
import { problems } from './problems';
import type { Caller } from './route';

/** Longer than any token this keeper issues by far; a bigger header is junk, refused unparsed. */
const MAX_TOKEN_LENGTH = 4096;

/**
 * How far a token's `iat` may lie ahead of this keeper's clock: enough for keepers whose clocks
 * differ by NTP's usual error, far too little to mint tokens that start later and so outlive a key
 * rotation's intent or an operator's removal window.
 */
export const IAT_CLOCK_SKEW_S = 60;

/**
 * 403 for every call while the registry is empty. Once an operator exists the answer is cached for
 * `ttlMs`, so the check costs one query per second at most, not one per request.
 */
export function registryGate(db: Knex, ttlMs = 1000): RequestHandler {
  let knownNonEmptyUntil = 0;
  return (_req, _res, next) => {
    if (Date.now() < knownNonEmptyUntil) return next();
    archonRegistryEmpty(db).then((empty) => {
      if (empty) return next(problems.registryEmpty());
      knownNonEmptyUntil = Date.now() + ttlMs;
      next();
    }, next);
  };
}

export function bearerToken(header: string | undefined): string {
  if (header === undefined) throw problems.unauthorized('this call needs Authorization: Bearer <operator token>');
  const m = /^Bearer +(\S+)$/i.exec(header.trim());
  if (!m) throw problems.unauthorized('the Authorization header must be "Bearer <operator token>"');
  if (m[1].length > MAX_TOKEN_LENGTH)
    throw problems.unauthorized('the token is not a valid operator token for this cluster');
  return m[1];
}

/**
 * Tokens this process has verified (signature, algorithm, issuer, required claims), by their exact
 * text, with the AID and the expiry. A token's validity depends only on its text, the signing key
 * and the issuer (fixed for one `authenticate` instance) and the clock, so a hit is checked against
 * the expiry on every use and then skips only the HMAC (the costliest step of a read). Only tokens
 * that passed verification are stored, so junk cannot fill it; it holds at most `max` entries
 * (oldest evicted first). The operator's existence, role and revocation are still read on every
 * request: a cached token is checked against them like a fresh one.
 */
export class VerifiedTokens {
  private readonly entries = new Map<string, { aid: string; expiresAtMs: number; iat: number; jti: string | null }>();
  constructor(private readonly max = 10_000) {}

  /** The AID of a verified token that has not expired at `nowMs`, else undefined. */
  get(token: string, nowMs: number): string | undefined {
    return this.claims(token, nowMs)?.aid;
  }

  /** The AID, `iat` (seconds) and expiry of a verified token that has not expired at `nowMs`, else undefined. */
  claims(token: string, nowMs: number): TokenClaims | undefined {
    const e = this.entries.get(token);
    if (e === undefined) return undefined;
    if (nowMs >= e.expiresAtMs) {
      this.entries.delete(token);
      return undefined;
    }
    return { aid: e.aid, iat: e.iat, jti: e.jti, expiresAtMs: e.expiresAtMs };
  }

  set(token: string, aid: string, expiresAtMs: number, iat = 0, jti: string | null = null): void {
    if (this.entries.size >= this.max) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(token, { aid, expiresAtMs, iat, jti });
  }

  get size(): number {
    return this.entries.size;
  }
}

interface TokenClaims {
  aid: string;
  iat: number;
  jti: string | null;
  expiresAtMs: number;
}

async function verifiedClaims(
  cache: VerifiedTokens,
  signingKey: Uint8Array,
  issuer: string,
  token: string,
): Promise<TokenClaims> {
  const hit = cache.claims(token, Date.now());
  if (hit !== undefined) return hit;
  try {
    const { aid, expiresAt, jti } = await verifyOperatorToken(signingKey, issuer, token);
    // Only reached once the signature is good, so the claims read here are the keeper's own.
    const { iat } = decodeJwt(token);
    if (typeof iat !== 'number' || iat > Date.now() / 1000 + IAT_CLOCK_SKEW_S) {
      throw new TokenRejected(
        `the token's iat claim lies in the future (more than ${IAT_CLOCK_SKEW_S}s ahead of the keeper's clock); check the issuing clock`,
      );
    }
    // jose refuses a token once now >= exp (whole seconds); expiresAt is exp * 1000, so the cache agrees.
    cache.set(token, aid, expiresAt.getTime(), iat, jti);
    return { aid, iat, jti, expiresAtMs: expiresAt.getTime() };
  } catch (err) {
    if (err instanceof TokenRejected) throw problems.unauthorized(err.reason);
    throw err;
  }
}

/**
 * Operators' roles and revocations, read for the requests of one event-loop turn in one statement
 * (api/batch.ts): each request's answer still comes from a read that started after the request
 * arrived, so a removed, demoted or revoked operator is refused from the next request on, at every
 * keeper (nothing is cached between turns), as with one query per request.
 */
export function accessReader(db: Knex): TickBatcher<string, ArchonAccess> {
  return new TickBatcher((aids) => getArchonAccess(db, aids));
}

/**
 * Why the token (`aid`, `iat`, `jti`) of an operator whose standing is `a` is refused, or null when
 * it is accepted: the operator is gone, its tokens were revoked since the token was issued, or this
 * token was revoked by its id. Every request asks it, and so does a held stream or wait, again and
 * again while it is open (api/stream-auth.ts).
 */
export function refusedToken(aid: string, iat: number, jti: string | null, a: ArchonAccess | undefined): string | null {
  if (a === undefined) return `operator ${aid} no longer exists; tokens of a removed operator are not accepted`;
  if (tokenRevoked(iat, a.tokensValidAfter))
    return `the tokens of operator ${aid} issued before ${a.tokensValidAfter!.toISOString()} were revoked; ask a cluster-admin for a new one (keeperctl archons token ${aid})`;
  if (jti !== null && a.revokedJtis.has(jti))
    return `token ${jti} of operator ${aid} was revoked; ask a cluster-admin for a new one (keeperctl archons token ${aid})`;
  return null;
}

export function authenticate(
  db: Knex,
  signingKey: Uint8Array,
  issuer: string,
  cache = new VerifiedTokens(),
): RequestHandler {
  const access = accessReader(db);
  return (req: Request, res: Response, next: NextFunction) => {
    (async () => {
      const token = bearerToken(req.headers.authorization);
      const { aid, iat, jti, expiresAtMs } = await verifiedClaims(cache, signingKey, issuer, token);
      if (!AID_PATTERN.test(aid))
        throw problems.unauthorized('the token is not a valid operator token for this cluster');
      const a = await access.get(aid);
      const refused = refusedToken(aid, iat, jti, a);
      if (refused !== null) throw problems.unauthorized(refused);
      res.locals.caller = {
        aid,
        role: a!.role,
        jti,
        source: req.ip ?? null,
        token: { iat, expiresAtMs },
      } satisfies Caller;
    })().then(() => next(), next);
  };
}

/** Throws the 403 problem unless the caller's role grants `permission`. */
export function checkPermission(caller: Caller, permission: string): void {
  if (!permits(permissionsOf(caller.role), permission)) {
    throw problems.forbidden(
      `operator ${caller.aid} (role ${caller.role}) lacks the permission ${permission}`,
      permission,
    );
  }
}
