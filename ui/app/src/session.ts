// The operator's session: the pasted JWT lives in this tab's sessionStorage only (gone when the tab
// closes, never in a URL, never in localStorage). Signing out keeps a reason for the sign-in page,
// e.g. the keeper's own words for an expired token.
import { navigate } from './router';

const TOKEN_KEY = 'keeper.token';
const REASON_KEY = 'keeper.signin-reason';

export function currentToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function signIn(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
  sessionStorage.removeItem(REASON_KEY);
}

export function signOut(reason?: string): void {
  sessionStorage.removeItem(TOKEN_KEY);
  if (reason) sessionStorage.setItem(REASON_KEY, reason);
  else sessionStorage.removeItem(REASON_KEY);
  navigate('/ui/signin');
}

/**
 * The signed-in operator's AID: the token's `sub` claim, read without checking the signature (the
 * keeper checks it on every call). Used only to ask the keeper what this operator may do; null
 * when the token has no readable `sub`.
 */
export function currentAid(): string | null {
  const payload = currentToken()?.split('.')[1];
  if (!payload) return null;
  try {
    const json = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
    const sub = (JSON.parse(json) as { sub?: unknown }).sub;
    return typeof sub === 'string' ? sub : null;
  } catch {
    return null;
  }
}

/** The reason the operator was sent back to sign in, if any. */
export function signInReason(): string | null {
  return sessionStorage.getItem(REASON_KEY);
}
