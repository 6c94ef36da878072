// Helpers for the Operator API integration tests: a small HTTP client that returns status, headers
// and the parsed body, operators with a given role, and a fingerprint of the registries to prove a
// rejected request changed nothing.
import assert from 'node:assert/strict';
import type { Knex } from 'knex';
import type { TestKeeper } from '../support/keeper';

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

export interface CallOptions {
  token?: string | null;
  body?: unknown;
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

export async function call(baseUrl: string, method: string, path: string, opts: CallOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | Uint8Array<ArrayBuffer> | undefined;
  if (opts.raw !== undefined) body = typeof opts.raw === 'string' ? opts.raw : new Uint8Array(opts.raw);
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(baseUrl + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, text, body: parsed };
}

/** Bound to one keeper and one token. */
export function clientFor(tk: Pick<TestKeeper, 'baseUrl' | 'adminToken'>, token: string | null = tk.adminToken) {
  return (method: string, path: string, opts: Omit<CallOptions, 'token'> & { token?: string | null } = {}) =>
    call(tk.baseUrl, method, path, { token, ...opts });
}

/** Creates an operator with `role` through the API (as admin) and returns its fresh token. */
export async function operatorToken(
  tk: Pick<TestKeeper, 'baseUrl' | 'adminToken'>,
  aid: string,
  role: string,
): Promise<string> {
  const api = clientFor(tk);
  const created = await api('POST', '/v1/archons', { body: { aid, role } });
  assert.equal(created.status, 201, created.text);
  const issued = await api('POST', `/v1/archons/${aid}/tokens`);
  assert.equal(issued.status, 201, issued.text);
  return issued.body.token as string;
}

/** Asserts an RFC 9457 problem with this status, and that nothing internal leaked into it. */
export function assertProblem(a: Answer, status: number, detail?: RegExp): void {
  assert.equal(a.status, status, a.text);
  assert.match(a.headers.get('content-type') ?? '', /^application\/problem\+json/);
  assert.equal(a.body.status, status);
  assert.match(a.body.type, /^urn:keeper:problem:[a-z-]+$/);
  assert.equal(typeof a.body.title, 'string');
  assert.equal(typeof a.body.detail, 'string');
  assert.doesNotMatch(a.text, /\bat .*\(.*:\d+:\d+\)|node_modules|\.js:\d+/, 'no stack trace in a problem');
  if (detail) assert.match(a.body.detail, detail);
}

/** A digest of every registry table: equal before and after means the request changed nothing. */
export async function registryFingerprint(db: Knex): Promise<string> {
  const { rows } = await db.raw(`select
      (select md5(coalesce(string_agg(t::text, '|' order by aid), '')) from archons t) ||
      (select md5(coalesce(string_agg(t::text, '|' order by sid), '')) from souls t) ||
      (select md5(coalesce(string_agg(t::text, '|' order by id), '')) from bootstrap_tokens t) ||
      (select md5(coalesce(string_agg(t::text, '|' order by name), '')) from services t) ||
      (select md5(coalesce(string_agg(t::text, '|' order by service, version), '')) from service_versions t) as f`);
  return rows[0].f as string;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
