// What a route is. Every Operator API route is a plain declaration in api/routes/<resource>.ts:
// method, OpenAPI-style path, the permission it needs, its schemas and a handler that returns a
// result instead of writing to the response. The table is the single place the HTTP app, the
// OpenAPI document, the route x role test and (later) the MCP tools read routes from.
import type { Request, Response } from 'express';
import type { ApiDeps } from './deps';
import type { JsonSchema, ObjectSchema } from './schemas/common';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** The authenticated caller, with the role read from the archons table for this request. */
export interface Caller {
  aid: string;
  role: string;
  /** The token's id and the address the call came from: what the activity stream records of it. */
  jti?: string | null;
  source?: string | null;
  /** The token's issue time (seconds) and expiry: what a held stream or wait checks again (api/stream-auth.ts). */
  token?: { iat: number; expiresAtMs: number };
}

export interface RouteContext<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  caller: Caller;
  deps: ApiDeps;
}

export interface RouteResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /**
   * A streamed answer (Server-Sent Events) instead of one JSON body: it writes to the response
   * itself and resolves when the stream ends. Validation, authentication and the permission check
   * have run before, as for every route.
   */
  stream?: (res: Response, req: Request) => Promise<void>;
}

export interface ResponseDecl {
  description: string;
  schema?: JsonSchema;
  contentType?: string;
}

export interface RouteDef<P = any, Q = any, B = any> {
  method: HttpMethod;
  /** OpenAPI form, e.g. `/v1/souls/{sid}`; every `{name}` must have a property in `params`. */
  path: string;
  operationId: string;
  tag: string;
  /** `<resource>:<action>` the caller needs (api/roles.ts). Missing => startup fails. */
  permission: string;
  summary: string;
  description?: string;
  params?: ObjectSchema;
  query?: ObjectSchema;
  /** `required: false` lets the body be absent (an empty POST); when present it must validate. */
  body?: { schema: ObjectSchema; required: boolean };
  /** Success responses by status; error responses (problems) are added to the document for all routes. */
  responses: Record<number, ResponseDecl>;
  handler(ctx: RouteContext<P, Q, B>): Promise<RouteResult>;
}

/** Identity function that types a route's handler by its declared parameter, query and body types. */
export function defineRoute<P = Record<string, never>, Q = Record<string, never>, B = undefined>(
  def: RouteDef<P, Q, B>,
): RouteDef<P, Q, B> {
  return def;
}
