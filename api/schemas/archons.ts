// Operators (interface spec 2.1) on the wire.
import {
  aidSchema,
  listSchema,
  named,
  nullableTimestampSchema,
  roleSchema,
  timestampSchema,
  type ObjectSchema,
} from './common';

export const archonSchema = named('Archon', {
  type: 'object',
  additionalProperties: false,
  required: ['aid', 'role', 'permissions', 'created_by', 'created_at', 'tokens_valid_after'],
  properties: {
    aid: aidSchema,
    role: { type: 'string' },
    permissions: { type: 'array', items: { type: 'string' }, description: "the role's permissions, as of now" },
    created_by: { type: ['string', 'null'], description: 'the operator who created this one' },
    created_at: timestampSchema,
    tokens_valid_after: {
      ...nullableTimestampSchema,
      description:
        'tokens issued before this moment are refused (POST /v1/archons/{aid}/revoke-tokens); null: none was ever revoked',
    },
  },
} as const satisfies ObjectSchema);

export const archonListSchema = listSchema('ArchonList', archonSchema);

export const createArchonBody = named('CreateArchon', {
  type: 'object',
  additionalProperties: false,
  required: ['aid', 'role'],
  properties: { aid: aidSchema, role: roleSchema },
} as const satisfies ObjectSchema);

export const updateArchonBody = named('UpdateArchon', {
  type: 'object',
  additionalProperties: false,
  required: ['role'],
  properties: { role: roleSchema },
} as const satisfies ObjectSchema);

export const revokeTokensBody = named('RevokeTokens', {
  type: 'object',
  additionalProperties: false,
  properties: {
    jti: {
      type: 'string',
      pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$',
      description:
        "revoke only this token: its id (a UUID; the activity stream's `jti` of a call made with it). Absent: every token issued before now",
    },
  },
} as const satisfies ObjectSchema);
export interface RevokeTokensInput {
  jti?: string;
}

export const aidParams = {
  type: 'object',
  additionalProperties: false,
  required: ['aid'],
  properties: { aid: aidSchema },
} as const satisfies ObjectSchema;

export const operatorTokenSchema = named('OperatorToken', {
  type: 'object',
  additionalProperties: false,
  required: ['aid', 'role', 'token', 'token_type', 'expires_at'],
  properties: {
    aid: aidSchema,
    role: { type: 'string' },
    token: { type: 'string', description: 'the JWT; send it as `Authorization: Bearer <token>`. Shown once' },
    token_type: { type: 'string', enum: ['Bearer'] },
    expires_at: nullableTimestampSchema,
  },
} as const satisfies ObjectSchema);

export interface CreateArchonInput {
  aid: string;
  role: string;
}
export interface UpdateArchonInput {
  role: string;
}
