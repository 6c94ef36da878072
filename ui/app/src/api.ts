// Calls to the Operator API with the session's token. Every failure becomes a Problem carrying the
// keeper's RFC 9457 body, so each view shows the keeper's own message. A 401 ends the session and
// sends the operator to sign in with that message (e.g. "the token has expired ...").
import { takeSseEvents } from '../../../common/sse';
import { currentToken, signOut } from './session';

export interface FieldError {
  path: string;
  message: string;
}

export class Problem extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly errors: FieldError[] = [],
  ) {
    super(detail);
    this.name = 'Problem';
  }
}

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

async function problemOf(res: Response): Promise<Problem> {
  const text = await res.text();
  try {
    const p = JSON.parse(text) as { title?: string; detail?: string; errors?: FieldError[] };
    if (typeof p.detail === 'string')
      return new Problem(res.status, p.title ?? res.statusText, p.detail, p.errors ?? []);
  } catch {
    /* not a problem body: fall through */
  }
  return new Problem(res.status, res.statusText, `the keeper answered ${res.status} ${res.statusText}`);
}

export async function api<T>(
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  path: string,
  body?: unknown,
  token = currentToken(),
): Promise<T> {
  if (token === null) {
    signOut();
    throw new Problem(401, 'Unauthorized', 'sign in first');
  }
  const headers: Record<string, string> = { Authorization: `Bearer ${token}`, Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
    });
  } catch (err) {
    throw new Problem(
      0,
      'Network error',
      `the keeper is not reachable (${err instanceof Error ? err.message : String(err)})`,
    );
  }
  if (res.status === 401) {
    const problem = await problemOf(res);
    signOut(problem.detail);
    throw problem;
  }
  if (!res.ok) throw await problemOf(res);
  // 204 (a delete) has no body to parse.
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

/** Every page of a list, following next_cursor (capped: a UI table is not an export). */
export async function listAll<T>(path: string, maxPages = 10): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < maxPages; i++) {
    const sep = path.includes('?') ? '&' : '?';
    const page: Page<T> = await api<Page<T>>(
      'GET',
      `${path}${sep}limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    items.push(...page.items);
    cursor = page.next_cursor;
    if (cursor === null) break;
  }
  return items;
}

export function enc(segment: string): string {
  return encodeURIComponent(segment);
}

export interface ServerEvent {
  id?: string;
  event: string;
  data: any;
}

/**
 * Follows a Server-Sent Events route with the session's token (EventSource cannot send an
 * Authorization header, so this reads the stream with fetch). Reconnects with Last-Event-ID when
 * the stream drops, until `onEvent` returns true or `signal` aborts.
 */
export async function followEvents(
  path: string,
  onEvent: (e: ServerEvent) => boolean,
  signal: AbortSignal,
): Promise<void> {
  let lastId: string | undefined;
  for (let attempt = 0; !signal.aborted && attempt < 30; attempt++) {
    const token = currentToken();
    if (token === null) return;
    let res: Response;
    try {
      res = await fetch(path, {
        headers: {
          Authorization: `Bearer ${token}`,
          Accept: 'text/event-stream',
          ...(lastId ? { 'Last-Event-ID': lastId } : {}),
        },
        signal,
        cache: 'no-store',
      });
    } catch {
      if (signal.aborted) return;
      await new Promise((r) => setTimeout(r, 1000));
      continue;
    }
    if (!res.ok || !res.body) throw await problemOf(res);
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let buf = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const taken = takeSseEvents(buf + dec.decode(value, { stream: true }));
        buf = taken.rest;
        for (const e of taken.events) {
          if (e.id) lastId = e.id;
          if (onEvent(e as ServerEvent)) {
            await reader.cancel();
            return;
          }
        }
      }
    } catch {
      if (signal.aborted) return;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}
