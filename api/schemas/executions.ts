// One-off executions on the wire (docs/executions.md).
import { labelSchema, named, sidSchema, type ObjectSchema } from './common';

export const executionParams = {
  type: 'object',
  additionalProperties: false,
  required: ['id'],
  properties: { id: { type: 'string', pattern: '^[a-z0-9]{1,16}-[0-9a-f]{8}$', description: 'the execution id' } },
} as const satisfies ObjectSchema;

export const executionBody = named('StartExecution', {
  type: 'object',
  additionalProperties: false,
  required: ['module', 'target'],
  properties: {
    module: {
      type: 'string',
      minLength: 1,
      maxLength: 128,
      description: 'a module of the core library (docs/state-modules.md), e.g. `core.cmd.run`',
    },
    params: { type: 'object', default: {}, description: "the module's parameters, checked against its schema" },
    target: {
      type: 'object',
      additionalProperties: false,
      description: 'the hosts: in any of `covens`, among `sids`, and matching `where` (each given one narrows)',
      properties: {
        covens: { type: 'array', items: labelSchema, maxItems: 64, uniqueItems: true },
        sids: { type: 'array', items: sidSchema, maxItems: 10000, uniqueItems: true },
        where: {
          type: 'string',
          minLength: 1,
          maxLength: 4096,
          description: 'CEL over `soulprint.self`, as GET /v1/souls?where=',
        },
      },
    },
    batch: { type: 'integer', minimum: 1, maximum: 10000, description: 'hosts per batch (all at once by default)' },
    timeout: {
      type: 'integer',
      minimum: 1,
      maximum: 3600,
      default: 60,
      description: 'seconds a host may take to answer before it is `unknown`',
    },
    output_cap: {
      type: 'integer',
      minimum: 256,
      maximum: 65536,
      default: 65536,
      description: 'bytes of output kept per host (UTF-8, cut at a character)',
    },
    dry_run: {
      type: 'boolean',
      default: false,
      description: 'check mode: nothing changes; `changed` means would change, with a diff where the module gives one',
    },
    confirm: {
      type: 'boolean',
      default: false,
      description: 'required when the target selects more hosts than the confirmation threshold',
    },
  },
} as const satisfies ObjectSchema);

export const executionPreviewBody = named('ExecutionPreview', {
  type: 'object',
  additionalProperties: false,
  required: ['target'],
  properties: { target: executionBody.properties.target },
} as const satisfies ObjectSchema);

export const executionPreviewSchema = named('ExecutionSelection', {
  type: 'object',
  required: ['selected', 'sids', 'modules', 'confirm_above'],
  properties: {
    selected: { type: 'integer', description: 'hosts the target selects (0 for an empty target)' },
    sids: { type: 'array', items: { type: 'string' }, description: 'the first 50, by SID' },
    modules: { type: 'array', items: { type: 'string' }, description: "the core modules the caller's role may run" },
    confirm_above: { type: 'integer', description: 'above this many hosts an execution needs `confirm: true`' },
  },
} as const satisfies ObjectSchema);

export const startedExecutionSchema = named('StartedExecution', {
  type: 'object',
  required: ['id', 'selected', 'sids', 'execution', 'events'],
  properties: {
    id: { type: 'string' },
    selected: { type: 'integer' },
    sids: { type: 'array', items: { type: 'string' } },
    execution: { type: 'string' },
    events: { type: 'string' },
  },
} as const satisfies ObjectSchema);

const hostSchema = {
  type: 'object',
  required: ['sid', 'status', 'changed', 'output'],
  properties: {
    sid: { type: 'string' },
    status: { type: 'string', enum: ['ok', 'changed', 'failed', 'unknown'] },
    changed: { type: 'boolean' },
    output: { type: 'string' },
    diff: { type: ['object', 'null'] },
    started_at: { type: ['string', 'null'] },
    finished_at: { type: ['string', 'null'] },
  },
} as const;

export const executionSchema = named('Execution', {
  type: 'object',
  required: ['id', 'aid', 'module', 'params', 'target', 'status', 'selected', 'summary', 'hosts'],
  properties: {
    id: { type: 'string' },
    aid: { type: 'string' },
    module: { type: 'string' },
    params: { type: 'object' },
    target: { type: 'object' },
    dry_run: { type: 'boolean' },
    timeout: { type: 'integer' },
    status: { type: 'string', enum: ['running', 'done'] },
    selected: { type: 'integer' },
    summary: { type: ['object', 'null'], description: 'when done: hosts ok, changed, failed, unknown' },
    created_at: { type: 'string' },
    finished_at: { type: ['string', 'null'] },
    hosts: { type: 'array', items: hostSchema },
  },
} as const satisfies ObjectSchema);
