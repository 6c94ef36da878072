// The service catalog (interface spec 2.3) on the wire. A service's version is its git ref.
import { CREDENTIAL_REF_PATTERN } from '../../scenario/load/git-policy';
import { LABEL_PATTERN, labelSchema, listSchema, named, timestampSchema, type ObjectSchema } from './common';

export const SERVICE_NAME_PATTERN = new RegExp(LABEL_PATTERN);

// https://, http://, ssh://, git:// and file:// URLs, or scp-like `user@host:path`; no whitespace or
// control characters, so the value is safe to hand to git as one argument.
const GIT_URL_PATTERN =
  '^(?:(?:https?|ssh|git|file)://[^\\s\\u0000-\\u001f\\u007f]+|[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^\\s\\u0000-\\u001f\\u007f]+)$';
// A branch or tag name as git accepts it (git check-ref-format, simplified): no '..', '//', '@{',
// no leading '/' or '-', no trailing '/', '.' or '.lock'.
const GIT_REF_PATTERN = '^(?!.*(?:\\.\\.|//|@\\{|\\.lock$|/$|\\.$))[A-Za-z0-9_][A-Za-z0-9._/+-]{0,254}$';

const gitSchema = {
  type: 'string',
  maxLength: 2048,
  pattern: GIT_URL_PATTERN,
  description:
    'the git repository: an https, http, ssh, git or file URL, or scp-like user@host:path; the scheme and host must be allowed by the ' +
    "keeper's services.git policy, and the URL must carry no credentials (use credential_ref)",
  examples: ['https://git.example.com/ops/nginx.git'],
} as const;

const credentialRefSchema = {
  type: 'string',
  maxLength: 512,
  pattern: CREDENTIAL_REF_PATTERN,
  description:
    "where the repository's credential lives: secretstore:<path>#<field> (a field `username` beside it is used when present). " +
    'The keeper reads it for each clone only and hands it to git through its environment; it is stored and shown nowhere. https (or http to a loopback host) only.',
  examples: ['secretstore:secret/keeper/git/acme#token'],
} as const;

export const refSchema = {
  type: 'string',
  maxLength: 255,
  pattern: GIT_REF_PATTERN,
  description:
    "a git branch or tag name (the service's version): letters, digits and '._/+-', no '..', '//', '@{', not ending in '/', '.' or '.lock'",
  examples: ['v1.4.0'],
} as const;

export const serviceSchema = named('Service', {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'git', 'ref', 'version', 'credential_ref', 'created_by', 'created_at', 'updated_at'],
  properties: {
    name: labelSchema,
    git: { type: 'string' },
    ref: { type: 'string' },
    credential_ref: {
      type: ['string', 'null'],
      description: 'the reference to the clone credential (never the credential)',
    },
    version: { type: 'string', description: 'the same as ref: a service is versioned by its git ref' },
    created_by: { type: ['string', 'null'] },
    created_at: timestampSchema,
    updated_at: timestampSchema,
  },
} as const satisfies ObjectSchema);

export const serviceListSchema = listSchema('ServiceList', serviceSchema);

export const createServiceBody = named('CreateService', {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'git', 'ref'],
  properties: {
    name: { ...labelSchema, description: 'the service name, unique in the catalog' },
    git: gitSchema,
    ref: refSchema,
    credential_ref: credentialRefSchema,
  },
} as const satisfies ObjectSchema);

export const serviceNameParams = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: labelSchema },
} as const satisfies ObjectSchema;

export interface CreateServiceInput {
  name: string;
  git: string;
  ref: string;
  credential_ref?: string;
}

export const publishVersionBody = named('PublishVersion', {
  type: 'object',
  additionalProperties: false,
  required: ['ref'],
  properties: {
    ref: {
      ...refSchema,
      description: 'the tag or branch to publish; it is resolved to a commit now and that commit is pinned',
    },
  },
} as const satisfies ObjectSchema);
export interface PublishVersionInput {
  ref: string;
}

export const versionParams = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'version'],
  properties: { name: labelSchema, version: refSchema },
} as const satisfies ObjectSchema;

export const yankSchema = named('VersionYank', {
  type: ['object', 'null'],
  additionalProperties: false,
  required: ['reason', 'yanked_by', 'yanked_at'],
  description:
    'set when the version was yanked: never offered as newer, refused for new incarnations and upgrades; incarnations on it keep running',
  properties: { reason: { type: 'string' }, yanked_by: { type: ['string', 'null'] }, yanked_at: timestampSchema },
} as const);

export const yankVersionBody = named('YankVersion', {
  type: 'object',
  additionalProperties: false,
  required: ['reason'],
  properties: {
    reason: {
      type: 'string',
      minLength: 1,
      maxLength: 1000,
      pattern: '\\S',
      description: 'why the version is withdrawn: shown to everyone who meets it',
    },
  },
} as const satisfies ObjectSchema);
export interface YankVersionInput {
  reason: string;
}

export const serviceVersionSchema = named('ServiceVersion', {
  type: 'object',
  additionalProperties: false,
  required: ['service', 'version', 'commit', 'state_schema_version', 'published_by', 'published_at', 'yanked'],
  properties: {
    service: { type: 'string' },
    version: { type: 'string', description: 'the published git ref' },
    commit: {
      type: 'string',
      description: 'the commit the ref resolved to when it was published: what every run of this version applies',
    },
    state_schema_version: { type: 'integer', description: "the state schema this commit's scenarios expect" },
    published_by: { type: ['string', 'null'] },
    published_at: timestampSchema,
    yanked: yankSchema,
  },
} as const satisfies ObjectSchema);

export const serviceVersionListSchema = listSchema('ServiceVersionList', serviceVersionSchema);

const inputInfoSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'type', 'required', 'secret'],
  properties: {
    name: { type: 'string' },
    type: { type: 'string', description: 'string, integer, number, boolean, list or map' },
    required: { type: 'boolean', description: 'true when the input has no default' },
    secret: { type: 'boolean' },
    default: { description: 'the default value (never shown for a secret input)' },
    schema: {
      type: 'object',
      description:
        'what the input declares inside its value: `items`, `properties`/`required`, `enum`, `minimum`/`maximum`, `pattern` (docs/scenario.md); absent for a bare type',
    },
  },
} as const;

export const serviceVersionDetailSchema = named('ServiceVersionDetail', {
  type: 'object',
  additionalProperties: false,
  required: [...serviceVersionSchema.required, 'operations'],
  properties: {
    ...serviceVersionSchema.properties,
    operations: {
      type: 'array',
      description: 'scenario/<operation>/main.yml at the pinned commit, each with its declared inputs',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'inputs'],
        properties: { name: { type: 'string' }, inputs: { type: 'array', items: inputInfoSchema } },
      },
    },
  },
} as const satisfies ObjectSchema);
