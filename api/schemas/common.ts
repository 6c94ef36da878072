// Building blocks shared by every resource's schemas. These plain JSON Schema (2020-12) objects are
// the one source of truth: ajv validates requests with them, and the OpenAPI document is generated
// from the very same objects. A schema registered with `named` appears once under
// components.schemas and is referenced from everywhere it is used.
import { AID_PATTERN, ROLE_NAMES } from '../roles';

export type JsonSchema = Record<string, unknown>;
export interface ObjectSchema extends JsonSchema {
  type: 'object';
  properties: Record<string, JsonSchema>;
}

const names = new Map<object, string>();

/** Registers a schema as an OpenAPI component called `name`; returns the schema itself. */
export function named<T extends JsonSchema>(name: string, schema: T): T {
  names.set(schema, name);
  return schema;
}

export function componentName(schema: object): string | undefined {
  return names.get(schema);
}

// Each label 1-63 of [a-z0-9-], no leading or trailing hyphen; at least two labels; the last label
// starts with a letter, so an IPv4 address is not taken for a name; 253 characters at most.
export const FQDN_PATTERN =
  '^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$';
export const LABEL_PATTERN = '^[a-z0-9][a-z0-9_.-]{0,62}$';

export const sidSchema = {
  type: 'string',
  maxLength: 253,
  pattern: FQDN_PATTERN,
  description:
    "the host's fully qualified domain name, lowercase: at least two dot-separated labels of a-z, 0-9 and '-' " +
    "(1-63 characters, not starting or ending with '-'), the last starting with a letter, 253 characters at most",
  examples: ['web-1.prod.example.com'],
} as const satisfies JsonSchema;

export const labelSchema = {
  type: 'string',
  maxLength: 63,
  pattern: LABEL_PATTERN,
  description: "a label: 1-63 characters of a-z, 0-9, '_', '.', '-', starting with a letter or digit",
} as const satisfies JsonSchema;

export const aidSchema = {
  type: 'string',
  minLength: 2,
  maxLength: 128,
  pattern: AID_PATTERN.source,
  description: "an operator id: 2-128 characters of a-z, 0-9 and '._@-', starting with a letter or digit",
  examples: ['alice@example.com'],
} as const satisfies JsonSchema;

export const roleSchema = {
  type: 'string',
  enum: [...ROLE_NAMES],
  description: `a built-in role: ${ROLE_NAMES.join(', ')}`,
} as const satisfies JsonSchema;

export const timestampSchema = { type: 'string', format: 'date-time' } as const satisfies JsonSchema;
export const nullableTimestampSchema = { type: ['string', 'null'], format: 'date-time' } as const satisfies JsonSchema;

export const MAX_PAGE = 1000;
export const DEFAULT_PAGE = 100;

/** `?limit=&cursor=` on every list (ARCHITECTURE 3). */
export const pageQueryProperties = {
  limit: {
    type: 'integer',
    minimum: 1,
    maximum: MAX_PAGE,
    default: DEFAULT_PAGE,
    description: `items per page, 1-${MAX_PAGE}`,
  },
  cursor: {
    type: 'string',
    minLength: 1,
    maxLength: 1024,
    pattern: '^[A-Za-z0-9_-]+$',
    description: 'the `next_cursor` of the previous page; opaque',
  },
} as const satisfies Record<string, JsonSchema>;

export const pageQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: pageQueryProperties,
} as const satisfies ObjectSchema;

export function listSchema(name: string, item: JsonSchema): ObjectSchema {
  return named(name, {
    type: 'object',
    additionalProperties: false,
    required: ['items', 'next_cursor'],
    properties: {
      items: { type: 'array', items: item },
      next_cursor: {
        type: ['string', 'null'],
        description: 'pass as `cursor` to get the next page; null on the last page',
      },
    },
  });
}

export const problemSchema = named('Problem', {
  type: 'object',
  required: ['type', 'title', 'status', 'detail'],
  description: 'An RFC 9457 problem (application/problem+json).',
  properties: {
    type: {
      type: 'string',
      description: 'urn:keeper:problem:<kind>',
      examples: ['urn:keeper:problem:invalid-request'],
    },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string', description: 'what happened and what to do about it' },
    errors: {
      type: 'array',
      description: 'for invalid requests: one entry per field and broken rule',
      items: {
        type: 'object',
        required: ['path', 'message'],
        properties: { path: { type: 'string', examples: ['/body/sid'] }, message: { type: 'string' } },
      },
    },
    missing_permission: { type: 'string', description: 'on 403: the permission the route needs' },
  },
} as const satisfies ObjectSchema);
