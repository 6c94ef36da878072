// The OpenAPI 3.1 document, generated from the route table and the very schema objects ajv
// validates with, so the document cannot drift from what the API accepts. Schemas registered with
// `named` become components and are referenced; problems (RFC 9457) are declared for every route.
import type { RouteDef } from './route';
import { componentName, problemSchema, type JsonSchema } from './schemas/common';
import { MAX_BODY_BYTES } from './body';

type Doc = Record<string, any>;

/** Copies a schema, replacing every named sub-schema (but not `root` itself) with a $ref. */
function withRefs(schema: unknown, components: Map<string, unknown>, root?: unknown): unknown {
  if (Array.isArray(schema)) return schema.map((s) => withRefs(s, components));
  if (typeof schema !== 'object' || schema === null) return schema;
  const name = componentName(schema);
  if (name !== undefined && schema !== root) {
    if (!components.has(name)) {
      components.set(name, null); // placeholder: a schema that contains itself terminates
      components.set(name, withRefs(schema, components, schema));
    }
    return { $ref: `#/components/schemas/${name}` };
  }
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, withRefs(v, components)]));
}

const PROBLEM_RESPONSES: Record<number, string> = {
  400: 'invalid request: malformed JSON, a broken schema rule (see `errors`), a bad cursor',
  401: 'the operator token is missing or not accepted (expired, wrong key or issuer, operator removed)',
  403: 'the operator lacks the permission (see `missing_permission`), or no operator exists yet',
  404: 'no such resource',
  409: 'conflict with the current state',
  413: `the body exceeds ${MAX_BODY_BYTES} bytes`,
  415: 'the body is not application/json (UTF-8, identity encoding)',
  503: 'the database is not answering; retry after Retry-After seconds',
};

function problemStatuses(route: RouteDef): number[] {
  const s = [400, 401, 403];
  if (route.params) s.push(404);
  if (route.method === 'post') s.push(409);
  if (route.method !== 'get') s.push(413, 415);
  s.push(503);
  return s;
}

function parameters(route: RouteDef, components: Map<string, unknown>): Doc[] {
  const out: Doc[] = [];
  for (const [where, schema] of [
    ['path', route.params],
    ['query', route.query],
  ] as const) {
    if (!schema) continue;
    const required = new Set<string>((schema.required as string[] | undefined) ?? []);
    for (const [name, prop] of Object.entries(schema.properties)) {
      const p = prop as JsonSchema;
      out.push({
        name,
        in: where,
        required: where === 'path' || required.has(name),
        ...(typeof p.description === 'string' ? { description: p.description } : {}),
        schema: withRefs(prop, components),
      });
    }
  }
  return out;
}

function operation(route: RouteDef, components: Map<string, unknown>): Doc {
  const responses: Doc = {};
  for (const [status, decl] of Object.entries(route.responses)) {
    responses[status] = {
      description: decl.description,
      ...(decl.schema
        ? { content: { [decl.contentType ?? 'application/json']: { schema: withRefs(decl.schema, components) } } }
        : {}),
    };
  }
  for (const status of problemStatuses(route)) {
    responses[status] ??= {
      description: PROBLEM_RESPONSES[status],
      content: { 'application/problem+json': { schema: withRefs(problemSchema, components) } },
    };
  }
  const op: Doc = {
    operationId: route.operationId,
    summary: route.summary,
    description: `${route.description ? route.description + '\n\n' : ''}Requires the permission \`${route.permission}\`.`,
    tags: [route.tag],
    security: [{ bearerAuth: [] }],
    'x-permission': route.permission,
    responses,
  };
  const params = parameters(route, components);
  if (params.length > 0) op.parameters = params;
  if (route.body)
    op.requestBody = {
      required: route.body.required,
      content: { 'application/json': { schema: withRefs(route.body.schema, components) } },
    };
  return op;
}

export function buildOpenApiDocument(routes: readonly RouteDef[], info: { version: string }): Doc {
  const components = new Map<string, unknown>();
  const paths: Doc = {};
  for (const route of routes) {
    paths[route.path] ??= {};
    paths[route.path][route.method] = operation(route, components);
  }
  const tags = [...new Set(routes.map((r) => r.tag))].map((name) => ({ name }));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Keeper Operator API',
      version: info.version,
      description:
        'Register hosts (souls), operators (archons) and services. Every /v1 call carries `Authorization: Bearer <operator JWT>`; ' +
        'errors are RFC 9457 problems (application/problem+json). Lists take `?limit=` (default 100, max 1000) and `?cursor=`, and answer `{items, next_cursor}`.',
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    security: [{ bearerAuth: [] }],
    tags,
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'an operator token (keeper init, or POST /v1/archons/{aid}/tokens)',
        },
      },
      schemas: Object.fromEntries([...components.entries()].sort(([a], [b]) => a.localeCompare(b))),
    },
  };
}
