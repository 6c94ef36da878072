// The operator's session: the pasted JWT lives in each tab's sessionStorage only (gone when the
// tabs close, never in a URL, never in localStorage or a cookie). The tabs of one browser share it
// over a same-origin BroadcastChannel: a tab opened from a link (ctrl-click, a pasted URL) asks
// the open tabs for the token before it shows the sign-in page, and signing out in one tab signs
// out all of them. Same-origin scripts could read sessionStorage anyway, so the channel opens no
// new door; an expired token is neither shared nor adopted. Signing out keeps a reason for the
// sign-in page, e.g. the keeper's own words for an expired token, and the page the operator was on,
// where signing in returns.
import { navigate } from './router';

const TOKEN_KEY = 'keeper.token';
const REASON_KEY = 'keeper.signin-reason';
const CHANNEL = 'keeper.session';
/** How long a new tab waits for an open tab to answer before it asks for a sign-in. */
const ASK_MS = 300;
/** How long a late answer is still taken (a tab busy rendering answers late under load). */
const LATE_MS = 5000;

type Message = { type: 'ask' } | { type: 'token'; token: string } | { type: 'signout'; reason?: string };

const channel: BroadcastChannel | null = typeof BroadcastChannel === 'undefined' ? null : new BroadcastChannel(CHANNEL);

export function currentToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function signIn(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
  sessionStorage.removeItem(REASON_KEY);
}

/** Drops the token here and in every other tab, and opens the sign-in page (returning here after). */
export function signOut(reason?: string): void {
  channel?.postMessage({ type: 'signout', reason } satisfies Message);
  dropSession(reason);
}

function dropSession(reason?: string): void {
  sessionStorage.removeItem(TOKEN_KEY);
  if (reason) sessionStorage.setItem(REASON_KEY, reason);
  else sessionStorage.removeItem(REASON_KEY);
  navigate(signInPath(location.pathname + location.search));
}

/** The sign-in page's path, remembering where to return (when that is a page of the UI). */
export function signInPath(returnTo: string): string {
  const next = safeReturn(returnTo);
  return next && next !== '/ui/' && next !== '/ui' ? `/ui/signin?next=${encodeURIComponent(next)}` : '/ui/signin';
}

/**
 * Where signing in may return: a path of this UI only (`/ui` or below, not the sign-in page), so a
 * crafted `?next=` cannot send the operator to another site (`//evil`, `/\evil`) or loop.
 */
export function safeReturn(next: string | null): string | null {
  if (!next || !/^\/ui(?:[/?]|$)/.test(next)) return null;
  if (next.includes('//') || next.includes('\\') || /^\/ui\/signin(?:[/?]|$)/.test(next)) return null;
  return next;
}

/** The `exp` claim has passed (read without checking the signature: the keeper checks every call). */
function expired(token: string): boolean {
  const exp = claims(token)?.exp;
  return typeof exp === 'number' && exp * 1000 <= Date.now();
}

function claims(token: string | null): Record<string, unknown> | null {
  const payload = token?.split('.')[1];
  if (!payload) return null;
  try {
    const parsed: unknown = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/')));
    return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * Takes the session of another open tab of this browser; called once before the app first renders,
 * which it holds for at most ASK_MS. An answer that comes later (a busy tab), while this tab still
 * has no token, is taken too and the sign-in page gives way to the page asked for. Also starts
 * answering other tabs' questions.
 */
export async function joinTabs(): Promise<void> {
  if (!channel) return;
  const ch = channel;
  let answered: ((token: string) => void) | null = null;
  ch.onmessage = (e: MessageEvent<Message>) => {
    const msg = e.data;
    if (msg?.type === 'ask') {
      const token = currentToken();
      if (token && !expired(token)) ch.postMessage({ type: 'token', token } satisfies Message);
    } else if (msg?.type === 'token' && typeof msg.token === 'string' && answered) {
      answered(msg.token);
    } else if (msg?.type === 'signout' && currentToken() !== null) {
      dropSession(typeof msg.reason === 'string' ? msg.reason : 'signed out in another tab');
    }
  };
  if (currentToken() !== null) return;
  const adopt = (token: string): boolean => {
    if (currentToken() !== null || expired(token)) return false;
    sessionStorage.setItem(TOKEN_KEY, token);
    return true;
  };
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ASK_MS);
    answered = (t) => {
      clearTimeout(timer);
      adopt(t);
      resolve();
    };
    ch.postMessage({ type: 'ask' } satisfies Message);
  });
  if (currentToken() !== null) {
    answered = null;
    return;
  }
  // Late answers: the app is showing the sign-in page by now.
  answered = (t) => {
    if (!adopt(t)) return;
    answered = null;
    const next = location.pathname.startsWith('/ui/signin')
      ? safeReturn(new URLSearchParams(location.search).get('next'))
      : location.pathname + location.search;
    navigate(next ?? '/ui/', { replace: true });
  };
  setTimeout(() => {
    answered = null;
  }, LATE_MS);
}

/**
 * The signed-in operator's AID: the token's `sub` claim, read without checking the signature (the
 * keeper checks it on every call). Used only to ask the keeper what this operator may do; null
 * when the token has no readable `sub`.
 */
export function currentAid(): string | null {
  const sub = claims(currentToken())?.sub;
  return typeof sub === 'string' ? sub : null;
}

/** The reason the operator was sent back to sign in, if any. */
export function signInReason(): string | null {
  return sessionStorage.getItem(REASON_KEY);
}
