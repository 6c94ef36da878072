// Souls (interface spec 2.2) and their bootstrap tokens on the wire.
import { SOUL_STATUSES } from '../../db/repos/souls';
import {
  labelSchema, listSchema, named, nullableTimestampSchema, pageQueryProperties, sidSchema, timestampSchema, type ObjectSchema,
} from './common';

export const TRANSPORTS = ['agent', 'ssh'] as const;
export const RESERVED_TRANSPORTS: readonly string[] = ['ssh'];

const covensSchema = {
  type: 'array', items: labelSchema, maxItems: 64, uniqueItems: true,
  description: 'stable host labels that scenarios target', examples: [['web', 'eu-west']],
} as const;

const statusSchema = { type: 'string', enum: [...SOUL_STATUSES] } as const;

export const soulSchema = named('Soul', {
  type: 'object', additionalProperties: false,
  required: ['sid', 'transport', 'covens', 'status', 'connected_kid', 'soulprint', 'last_seen_at', 'onboarded_at', 'cert_not_after', 'revoked_at', 'created_at', 'updated_at', 'bootstrap_token_expires_at'],
  properties: {
    sid: sidSchema,
    transport: { type: 'string' },
    covens: { type: 'array', items: { type: 'string' } },
    status: { ...statusSchema, description: 'registry snapshot; it lags the live stream by a few seconds' },
    connected_kid: { type: ['string', 'null'], description: 'the keeper that last held the stream' },
    soulprint: {
      type: ['object', 'null'],
      description: 'the host facts the soul last reported (fqdn, hostname, os, architecture, cpu count, memory, addresses, soul version); null until it first connects',
    },
    last_seen_at: nullableTimestampSchema,
    onboarded_at: nullableTimestampSchema,
    cert_not_after: {
      ...nullableTimestampSchema,
      description: "expiry of the soul's live certificate; a connected soul renews it at two thirds of its lifetime (docs/certificates.md); null before onboarding",
    },
    revoked_at: { ...nullableTimestampSchema, description: 'when an operator revoked the soul; null unless its status is revoked' },
    created_at: timestampSchema,
    updated_at: timestampSchema,
    bootstrap_token_expires_at: {
      ...nullableTimestampSchema,
      description: 'expiry of the unused bootstrap token; null when none is outstanding, a past time when it expired unused',
    },
  },
} as const satisfies ObjectSchema);

export const soulListSchema = named('SoulList', {
  ...listSchema('SoulList', soulSchema),
  properties: {
    ...listSchema('SoulList', soulSchema).properties,
    counts: {
      type: 'object', description: 'with `?counts=true`: souls per status matching the other filters',
      properties: Object.fromEntries(SOUL_STATUSES.map((st) => [st, { type: 'integer', minimum: 0 }])),
    },
  },
});

export const registerSoulBody = named('RegisterSoul', {
  type: 'object', additionalProperties: false, required: ['sid', 'transport', 'covens'],
  properties: {
    sid: sidSchema,
    transport: { type: 'string', enum: [...TRANSPORTS], description: '`agent`; `ssh` is reserved and answers 400' },
    covens: covensSchema,
  },
} as const satisfies ObjectSchema);

export const bootstrapTokenProperties = {
  bootstrap_token: { type: 'string', description: 'plaintext bootstrap token for `soul init`; shown once, only its hash is stored', pattern: '^kbt_' },
  bootstrap_token_expires_at: timestampSchema,
} as const;

export const registeredSoulSchema = named('RegisteredSoul', {
  type: 'object', additionalProperties: false,
  required: [...soulSchema.required, 'bootstrap_token'],
  properties: { ...soulSchema.properties, ...bootstrapTokenProperties },
} as const satisfies ObjectSchema);

export const issuedTokenSchema = named('IssuedBootstrapToken', {
  type: 'object', additionalProperties: false, required: ['sid', 'bootstrap_token', 'bootstrap_token_expires_at'],
  properties: { sid: sidSchema, ...bootstrapTokenProperties },
} as const satisfies ObjectSchema);

export const sidParams = {
  type: 'object', additionalProperties: false, required: ['sid'], properties: { sid: sidSchema },
} as const satisfies ObjectSchema;

export const listSoulsQuery = {
  type: 'object', additionalProperties: false,
  properties: {
    ...pageQueryProperties,
    coven: { ...labelSchema, description: 'only souls carrying this coven' },
    status: { ...statusSchema, description: 'only souls in this status' },
    sid: { type: 'string', minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.-]+$', description: 'only souls whose SID contains this text (case-insensitive)' },
    counts: { type: 'boolean', default: false, description: 'also answer `counts`: souls per status matching the other filters (status left out)' },
  },
} as const satisfies ObjectSchema;

const forceSchema = { type: 'boolean', default: false, description: 'mark the active token used and issue a new one' } as const;

export const issueTokenQuery = {
  type: 'object', additionalProperties: false, properties: { force: forceSchema },
} as const satisfies ObjectSchema;

export const issueTokenBody = named('IssueBootstrapToken', {
  type: 'object', additionalProperties: false, properties: { force: forceSchema },
} as const satisfies ObjectSchema);

export interface RegisterSoulInput { sid: string; transport: (typeof TRANSPORTS)[number]; covens: string[] }
export interface ListSoulsQuery { limit: number; cursor?: string; coven?: string; status?: (typeof SOUL_STATUSES)[number]; sid?: string; counts: boolean }
