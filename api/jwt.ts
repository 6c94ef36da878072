// Operator tokens: HS256 JWTs signed with the 32-byte key from the secrets store (interface spec 5).
// The algorithm is pinned on verification, issuer and expiry are checked, and `sub` is the AID.
import { randomUUID } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
export { decodeSigningKey } from '../platform/signing-key';

export interface OperatorClaims {
  aid: string;
  role: string;
  expiresAt: Date;
  iat: number;
  jti: string | null;
}

/**
 * Revocation (POST /v1/archons/{aid}/revoke-tokens) stores a moment; a token is refused when it was
 * issued before the second that moment falls in ends. `iat` has whole seconds, so a token issued in
 * that same second, before or after the revocation, cannot be told apart: it is refused, and a
 * token issued afterwards is dated to the next whole second instead (tokenIssueTime).
 */
export function tokenRevoked(iatSeconds: number, validAfter: Date | null): boolean {
  return validAfter !== null && iatSeconds < Math.ceil(validAfter.getTime() / 1000);
}

/** When a new token of an operator revoked at `validAfter` is dated: now, or the first second it is valid from. */
export function tokenIssueTime(validAfter: Date | null, now = new Date()): Date {
  if (validAfter === null) return now;
  const firstValid = Math.ceil(validAfter.getTime() / 1000) * 1000;
  return firstValid > now.getTime() ? new Date(firstValid) : now;
}

export async function issueOperatorToken(
  key: Uint8Array,
  issuer: string,
  aid: string,
  role: string,
  ttlMs: number,
  now = new Date(),
): Promise<{ token: string; expiresAt: Date }> {
  const iat = Math.floor(now.getTime() / 1000);
  const exp = iat + Math.floor(ttlMs / 1000);
  const token = await new SignJWT({ role })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(issuer)
    .setSubject(aid)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .setJti(randomUUID())
    .sign(key);
  return { token, expiresAt: new Date(exp * 1000) };
}

export class TokenRejected extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'TokenRejected';
  }
}

/** Verifies a token; every failure is a TokenRejected whose reason is safe to show the caller. */
export async function verifyOperatorToken(key: Uint8Array, issuer: string, token: string): Promise<OperatorClaims> {
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: ['HS256'],
      issuer,
      requiredClaims: ['exp', 'sub', 'iat'],
    });
    if (typeof payload.sub !== 'string' || typeof payload.role !== 'string')
      throw new TokenRejected('the token lacks the sub or role claim');
    return {
      aid: payload.sub,
      role: payload.role,
      expiresAt: new Date((payload.exp as number) * 1000),
      iat: payload.iat as number,
      jti: typeof payload.jti === 'string' ? payload.jti : null,
    };
  } catch (err) {
    if (err instanceof TokenRejected) throw err;
    if (err instanceof joseErrors.JWTExpired)
      throw new TokenRejected('the token has expired; obtain a fresh one (POST /v1/archons/{aid}/tokens)');
    if (err instanceof joseErrors.JWTClaimValidationFailed)
      throw new TokenRejected(`the token's ${err.claim} claim is not accepted`);
    throw new TokenRejected('the token is not a valid operator token for this cluster');
  }
}
