// Souls (interface spec 2.2) and their bootstrap tokens on the wire.
import { SOUL_STATUSES } from '../../db/repos/souls';
import {
  labelSchema,
  listSchema,
  named,
  nullableTimestampSchema,
  pageQueryProperties,
  sidSchema,
  timestampSchema,
  type ObjectSchema,
} from './common';

export const TRANSPORTS = ['agent', 'ssh'] as const;

/** The SSH block as stored and shown: connection settings and the key's reference, never a key. */
export const sshSettingsSchema = named('SoulSsh', {
  type: 'object',
  additionalProperties: false,
  required: ['address', 'port', 'user', 'host_key', 'credential_ref', 'sudo', 'trust_on_first_use'],
  description:
    'transport `ssh` only: how the keeper reaches the host (docs/ssh.md). The private key stays in the secrets store.',
  properties: {
    address: {
      type: 'string',
      minLength: 1,
      maxLength: 253,
      pattern: '^[A-Za-z0-9.:-]+$',
      description: 'host name or IP address sshd listens on',
    },
    port: { type: 'integer', minimum: 1, maximum: 65535 },
    user: {
      type: 'string',
      pattern: '^[a-z_][a-z0-9_.-]{0,31}$',
      description: 'the login user; with `sudo`, steps run through `sudo -n`',
    },
    host_key: {
      type: ['string', 'null'],
      maxLength: 16384,
      description:
        "the host's pinned public key (`<type> <base64>`, as in known_hosts or /etc/ssh/ssh_host_*_key.pub); null until a trust-on-first-use soul is first reached",
    },
    credential_ref: {
      type: 'string',
      description: '`secretstore:<path>#<field>`: where the private key is kept; read at connect time only',
    },
    sudo: { type: 'boolean' },
    trust_on_first_use: {
      type: 'boolean',
      description: 'the operator asked to record the first host key seen instead of pinning one',
    },
  },
} as const satisfies ObjectSchema);

const sshInputSchema = named('RegisterSoulSsh', {
  type: 'object',
  additionalProperties: false,
  required: ['address', 'user', 'credential_ref'],
  properties: {
    ...sshSettingsSchema.properties,
    port: { ...sshSettingsSchema.properties.port, default: 22 },
    host_key: {
      type: 'string',
      minLength: 1,
      maxLength: 16384,
      description: "the host's public key to pin (`<type> <base64> [comment]`); required unless trust_on_first_use",
    },
    credential_ref: {
      type: 'string',
      minLength: 1,
      maxLength: 700,
      pattern: '^secretstore:',
      description: '`secretstore:<path>#<field>` holding the OpenSSH private key',
    },
    sudo: { type: 'boolean', default: false, description: 'run steps as root through `sudo -n` (for a non-root user)' },
    trust_on_first_use: {
      type: 'boolean',
      default: false,
      description: 'no host_key: record the first key seen (recorded and shown; pinning is the safe default)',
    },
  },
} as const satisfies ObjectSchema);

const covensSchema = {
  type: 'array',
  items: labelSchema,
  maxItems: 64,
  uniqueItems: true,
  description: 'stable host labels that scenarios target',
  examples: [['web', 'eu-west']],
} as const;

const statusSchema = { type: 'string', enum: [...SOUL_STATUSES] } as const;

export const soulSchema = named('Soul', {
  type: 'object',
  additionalProperties: false,
  required: [
    'sid',
    'transport',
    'covens',
    'status',
    'connected_kid',
    'soulprint',
    'last_seen_at',
    'onboarded_at',
    'cert_not_after',
    'revoked_at',
    'created_at',
    'updated_at',
    'bootstrap_token_expires_at',
    'ssh',
    'last_contact_at',
    'last_error',
  ],
  properties: {
    sid: sidSchema,
    transport: { type: 'string' },
    covens: { type: 'array', items: { type: 'string' } },
    status: { ...statusSchema, description: 'registry snapshot; it lags the live stream by a few seconds' },
    connected_kid: { type: ['string', 'null'], description: 'the keeper that last held the stream' },
    soulprint: {
      type: ['object', 'null'],
      description:
        'the host facts the soul last reported (fqdn, hostname, os, architecture, cpu count, memory, addresses, soul version); null until it first connects',
    },
    last_seen_at: nullableTimestampSchema,
    onboarded_at: nullableTimestampSchema,
    cert_not_after: {
      ...nullableTimestampSchema,
      description:
        "expiry of the soul's live certificate; a connected soul renews it at two thirds of its lifetime (docs/certificates.md); null before onboarding",
    },
    revoked_at: {
      ...nullableTimestampSchema,
      description: 'when an operator revoked the soul; null unless its status is revoked',
    },
    created_at: timestampSchema,
    updated_at: timestampSchema,
    bootstrap_token_expires_at: {
      ...nullableTimestampSchema,
      description:
        'expiry of the unused bootstrap token; null when none is outstanding, a past time when it expired unused',
    },
    ssh: {
      anyOf: [sshSettingsSchema, { type: 'null' }],
      description: 'transport `ssh`: the connection settings (no key material); null for agents',
    },
    last_contact_at: {
      ...nullableTimestampSchema,
      description: 'transport `ssh`: the last successful connection (dispatch or check)',
    },
    last_error: {
      type: ['string', 'null'],
      description: 'transport `ssh`: why the last connection failed; null after a success',
    },
    soulprint_age_s: {
      type: ['integer', 'null'],
      description: 'with `where`, `fields` or `count_by`: seconds since the soulprint was reported; null without one',
    },
    facts: { type: 'object', description: 'with `fields`: just those facts, by path (null when the soul lacks one)' },
  },
} as const satisfies ObjectSchema);

export const soulListSchema = named('SoulList', {
  ...listSchema('SoulList', soulSchema),
  properties: {
    ...listSchema('SoulList', soulSchema).properties,
    counts: {
      type: 'object',
      description: 'with `?counts=true`: souls per status matching the other filters',
      properties: Object.fromEntries(SOUL_STATUSES.map((st) => [st, { type: 'integer', minimum: 0 }])),
    },
    refresh: {
      type: 'object',
      description:
        'with `?refresh=true`: `asked` (connected agent souls asked for their facts), `answered` (their fresh facts are in this answer), ' +
        '`unanswered` (SIDs asked that did not answer in time; their stored facts and age are shown)',
      properties: {
        asked: { type: 'integer', minimum: 0 },
        answered: { type: 'integer', minimum: 0 },
        unanswered: { type: 'array', items: { type: 'string' } },
      },
    },
  },
});

export const registerSoulBody = named('RegisterSoul', {
  type: 'object',
  additionalProperties: false,
  required: ['sid', 'transport', 'covens'],
  properties: {
    sid: sidSchema,
    transport: {
      type: 'string',
      enum: [...TRANSPORTS],
      description:
        '`agent` (a resident soul onboarded with a bootstrap token) or `ssh` (push mode: needs `ssh`, no token)',
    },
    covens: covensSchema,
    ssh: sshInputSchema,
  },
} as const satisfies ObjectSchema);

export const bootstrapTokenProperties = {
  bootstrap_token: {
    type: 'string',
    description: 'plaintext bootstrap token for `soul init`; shown once, only its hash is stored',
    pattern: '^kbt_',
  },
  bootstrap_token_expires_at: timestampSchema,
} as const;

export const registeredSoulSchema = named('RegisteredSoul', {
  type: 'object',
  additionalProperties: false,
  required: [...soulSchema.required],
  description: 'the registered soul; `bootstrap_token` for transport agent only (an SSH host has none)',
  properties: { ...soulSchema.properties, ...bootstrapTokenProperties },
} as const satisfies ObjectSchema);

export const issuedTokenSchema = named('IssuedBootstrapToken', {
  type: 'object',
  additionalProperties: false,
  required: ['sid', 'bootstrap_token', 'bootstrap_token_expires_at'],
  properties: { sid: sidSchema, ...bootstrapTokenProperties },
} as const satisfies ObjectSchema);

export const sidParams = {
  type: 'object',
  additionalProperties: false,
  required: ['sid'],
  properties: { sid: sidSchema },
} as const satisfies ObjectSchema;

export const listSoulsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...pageQueryProperties,
    coven: { ...labelSchema, description: 'only souls carrying this coven' },
    status: { ...statusSchema, description: 'only souls in this status' },
    sid: {
      type: 'string',
      minLength: 1,
      maxLength: 253,
      pattern: '^[A-Za-z0-9.-]+$',
      description: 'only souls whose SID contains this text (case-insensitive)',
    },
    counts: {
      type: 'boolean',
      default: false,
      description: 'also answer `counts`: souls per status matching the other filters (status left out)',
    },
    where: {
      type: 'string',
      minLength: 1,
      maxLength: 4096,
      description:
        'a CEL expression over `soulprint.self` (the stored facts and `covens`), e.g. `soulprint.self.os_release == "12"`: only souls it is true for. ' +
        'Answered from the stored soulprints, no host is contacted; a soul without the fact does not match (docs/executions.md)',
    },
    fields: {
      type: 'string',
      minLength: 1,
      maxLength: 1024,
      pattern: '^[A-Za-z0-9_]+(\\.[A-Za-z0-9_]+)*(,[A-Za-z0-9_]+(\\.[A-Za-z0-9_]+)*)*$',
      description: 'comma-separated fact paths (`os_release,architecture`): each item gets `facts` with just these',
    },
    count_by: {
      type: 'string',
      minLength: 1,
      maxLength: 256,
      pattern: '^[A-Za-z0-9_]+(\\.[A-Za-z0-9_]+)*$',
      description:
        'a fact path: also answer `count_by`, the number of matching souls (all pages) per value of that fact',
    },
    refresh: {
      type: 'boolean',
      default: false,
      description:
        'first ask the connected agent souls the other filters select (coven, status, sid; `where` is evaluated after) for their facts now, ' +
        'wait up to 5 s for their answers, then answer as a fact query; `refresh` in the answer says how many were asked and answered',
    },
  },
} as const satisfies ObjectSchema;

const forceSchema = {
  type: 'boolean',
  default: false,
  description: 'mark the active token used and issue a new one',
} as const;

export const issueTokenQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { force: forceSchema },
} as const satisfies ObjectSchema;

export const issueTokenBody = named('IssueBootstrapToken', {
  type: 'object',
  additionalProperties: false,
  properties: { force: forceSchema },
} as const satisfies ObjectSchema);

export interface RegisterSshInput {
  address: string;
  port: number;
  user: string;
  host_key?: string;
  credential_ref: string;
  sudo: boolean;
  trust_on_first_use: boolean;
}
export interface RegisterSoulInput {
  sid: string;
  transport: (typeof TRANSPORTS)[number];
  covens: string[];
  ssh?: RegisterSshInput;
}
export interface ListSoulsQuery {
  limit: number;
  cursor?: string;
  coven?: string;
  status?: (typeof SOUL_STATUSES)[number];
  sid?: string;
  counts: boolean;
  where?: string;
  fields?: string;
  count_by?: string;
  refresh: boolean;
}
