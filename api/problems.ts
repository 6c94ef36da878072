// RFC 9457 problem bodies (ARCHITECTURE 3): every error the Operator API answers is one of these,
// `application/problem+json`. `type` is a URN naming the kind of problem (listed in docs/api.md);
// `detail` says what to do about it. Nothing internal (a stack, a SQL message) ever reaches a body.
import type { Response } from 'express';
import { RepoConflict, RepoNotFound } from '../db/repos/errors';
import { Refusal, TEMPORAL_UNAVAILABLE, type RunRefused } from '../runs/index';

export interface FieldError {
  path: string;
  message: string;
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: FieldError[];
  /** Only on 403 for a missing permission: the permission the route needs. */
  missing_permission?: string;
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export const PROBLEM_TYPE_PREFIX = 'urn:keeper:problem:';

export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly kind: string,
    readonly detail: string,
    readonly extra: { errors?: FieldError[]; missing_permission?: string; headers?: Record<string, string> } = {},
  ) {
    super(detail);
    this.name = 'ApiProblem';
  }

  body(): ProblemBody {
    const body: ProblemBody = {
      type: PROBLEM_TYPE_PREFIX + this.kind,
      title: TITLES[this.status] ?? 'Error',
      status: this.status,
      detail: this.detail,
    };
    if (this.extra.errors) body.errors = this.extra.errors;
    if (this.extra.missing_permission) body.missing_permission = this.extra.missing_permission;
    return body;
  }
}

export const problems = {
  invalid: (detail: string, errors?: FieldError[]) =>
    new ApiProblem(400, 'invalid-request', detail, errors ? { errors } : {}),
  unauthorized: (detail: string) =>
    new ApiProblem(401, 'unauthorized', detail, {
      headers: { 'WWW-Authenticate': 'Bearer realm="keeper", error="invalid_token"' },
    }),
  forbidden: (detail: string, permission: string) =>
    new ApiProblem(403, 'forbidden', detail, { missing_permission: permission }),
  registryEmpty: () =>
    new ApiProblem(
      403,
      'registry-empty',
      'the operator registry is empty: every API call is refused until `keeper init --archon=<AID>` creates the first operator',
    ),
  notFound: (detail: string) => new ApiProblem(404, 'not-found', detail),
  methodNotAllowed: (allow: string[]) =>
    new ApiProblem(405, 'method-not-allowed', `this path answers ${allow.join(', ')} only`, {
      headers: { Allow: allow.join(', ') },
    }),
  conflict: (detail: string) => new ApiProblem(409, 'conflict', detail),
  /** Well-formed, but what it names cannot be used: a repository that does not exist, a ref that does not resolve, lint errors. */
  unprocessable: (detail: string, errors?: FieldError[]) =>
    new ApiProblem(422, 'unprocessable', detail, errors ? { errors } : {}),
  tooLarge: (limit: number) =>
    new ApiProblem(413, 'body-too-large', `the request body exceeds the limit of ${limit} bytes`),
  unsupportedMediaType: (detail: string) => new ApiProblem(415, 'unsupported-media-type', detail),
  unavailable: (what: string) =>
    new ApiProblem(503, 'dependency-unavailable', `${what} is not answering; retry shortly`, {
      headers: { 'Retry-After': '5' },
    }),
  /** Temporal is away (issue 45): naming it and the fix, as the run service does. */
  temporal: () =>
    new ApiProblem(503, 'dependency-unavailable', TEMPORAL_UNAVAILABLE, { headers: { 'Retry-After': '5' } }),
  internal: () => new ApiProblem(500, 'internal', 'the keeper failed to handle this request; the event is in its log'),
};

// Connection-level failures of PostgreSQL (class 08, shutdown, too many connections) or of the pool.
const DB_DOWN_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P02', '57P03', '53300']);

function isDependencyDown(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: string; code?: unknown };
  if (e.name === 'KnexTimeoutError') return true;
  return typeof e.code === 'string' && (DB_DOWN_CODES.has(e.code) || e.code.startsWith('08'));
}

/** The status and problem of each kind of run-service refusal (runs/start/outcome.ts). */
export function refusedProblem(r: Pick<RunRefused, 'kind' | 'reason' | 'fields'>): ApiProblem {
  const fields = r.fields.length > 0 ? r.fields : undefined;
  switch (r.kind) {
    case 'invalid':
      return problems.invalid(r.reason, fields);
    case 'not_found':
      return problems.notFound(r.reason);
    case 'conflict':
      return problems.conflict(r.reason);
    case 'unprocessable':
      return problems.unprocessable(r.reason, fields);
    case 'unavailable':
      return new ApiProblem(503, 'dependency-unavailable', r.reason, { headers: { 'Retry-After': '5' } });
  }
}

/** Maps anything thrown while handling a request to the problem to answer with. */
export function toProblem(err: unknown): ApiProblem {
  if (err instanceof ApiProblem) return err;
  // What the run service's helpers throw (the incarnation lookup, catalog loads); its operations answer outcomes.
  if (err instanceof Refusal) return refusedProblem(err);
  if (err instanceof RepoConflict) return problems.conflict(err.message);
  if (err instanceof RepoNotFound) return problems.notFound(err.message);
  if (isDependencyDown(err)) return problems.unavailable('the database');
  // Errors from express and body-parser carry a client-error status (bad URL encoding, aborted body...).
  const status = typeof err === 'object' && err !== null ? (err as { status?: unknown }).status : undefined;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 413) return problems.tooLarge(Number((err as { limit?: unknown }).limit) || 0);
    if (status === 415)
      return problems.unsupportedMediaType(
        'the request body encoding is not supported; send identity-encoded UTF-8 JSON',
      );
    return new ApiProblem(
      status,
      'invalid-request',
      status === 400
        ? 'the request is malformed (for example, bad percent-encoding in the URL, or a body cut short)'
        : `the request was rejected: ${(TITLES[status] ?? 'client error').toLowerCase()}`,
    );
  }
  return problems.internal();
}

export function sendProblem(res: Response, problem: ApiProblem): void {
  if (res.headersSent) return;
  for (const [k, v] of Object.entries(problem.extra.headers ?? {})) res.setHeader(k, v);
  res.status(problem.status).type('application/problem+json').send(JSON.stringify(problem.body()));
}
