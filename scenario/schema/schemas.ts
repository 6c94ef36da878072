/**
 * JSON schemas of the service files. Shape only; meaning (types of
 * defaults, expressions, module parameters, references) is checked in
 * ../check/. Rule ids: SL003 service.yml, SL007 scenario, SL018 migration.
 */
import { DURATION_PATTERN } from '../../common/duration';

const stringOrList = {
  anyOf: [
    { type: 'string', minLength: 1 },
    { type: 'array', items: { type: 'string', minLength: 1 } },
  ],
};
const expression = { anyOf: [{ type: 'string', minLength: 1 }, { type: 'boolean' }] };
const STATE_KEY = '^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*$';
const stateSets = {
  type: 'object',
  additionalProperties: false,
  properties: {
    sets: { type: 'object', propertyNames: { pattern: STATE_KEY } },
  },
};
// A migration may also drop keys (`unsets: [key, ...]`) and rename them (`moves: {from: to}`):
// a key a version no longer uses does not stay in the state for good (docs/versions.md).
const migrationChanges = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...stateSets.properties,
    unsets: { type: 'array', items: { type: 'string', pattern: STATE_KEY } },
    moves: {
      type: 'object',
      propertyNames: { pattern: STATE_KEY },
      additionalProperties: { type: 'string', pattern: STATE_KEY },
    },
  },
};

export const INPUT_TYPES = ['string', 'integer', 'number', 'boolean', 'list', 'map'] as const;

export const serviceSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'state_schema_version'],
  properties: {
    name: { type: 'string', pattern: '^[a-z0-9][a-z0-9._-]{0,62}$' },
    state_schema_version: { type: 'integer', minimum: 1, maximum: 10000 },
    description: { type: 'string' },
    // Prefixes in the secrets store this service may read (issue 12; docs/secrets.md).
    secrets: {
      type: 'array',
      maxItems: 50,
      items: { type: 'string', pattern: '^[A-Za-z0-9_-]+(/[A-Za-z0-9_.-]+)*/?$' },
    },
    // `version` is reported by its own rule (SL004) with a better message.
    version: {},
  },
};

export const taskSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'module'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    module: { type: 'string', minLength: 1 },
    params: { type: 'object' },
    when: expression,
    changed_when: expression,
    failed_when: expression,
    until: expression,
    retries: { type: 'integer', minimum: 0, maximum: 100 },
    delay: { type: 'integer', minimum: 0, maximum: 3600 },
    register: { type: 'string', pattern: '^[a-z_][a-z0-9_]{0,62}$' },
    require: stringOrList,
    onchanges: stringOrList,
    on: stringOrList,
    where: expression,
    // `output: safe`: the step's output is shown even when it may read a file holding a secret
    // (docs/secrets.md "Output"); its output is still scrubbed of the host's secret values.
    output: { enum: ['safe'] },
    // A CEL expression giving a list, or a YAML list (docs/scenario.md "loop").
    loop: { anyOf: [{ type: 'string', minLength: 1 }, { type: 'array' }] },
  },
};

// What an input declaration may say about the inside of its value (scenario/input-schema.ts), and
// the same again for each list item and map property: `#/$defs/value` is that recursion.
const valueSchemaKeywords = {
  type: { enum: [...INPUT_TYPES] },
  items: { $ref: '#/$defs/value' },
  properties: {
    type: 'object',
    maxProperties: 100,
    propertyNames: { minLength: 1, maxLength: 63 },
    additionalProperties: { $ref: '#/$defs/value' },
  },
  required: { type: 'array', maxItems: 100, uniqueItems: true, items: { type: 'string', minLength: 1 } },
  enum: { type: 'array', minItems: 1, maxItems: 200 },
  minimum: { type: 'number' },
  maximum: { type: 'number' },
  pattern: { type: 'string', minLength: 1, maxLength: 500 },
};

export const scenarioSchema = {
  $defs: {
    value: {
      type: 'object',
      additionalProperties: false,
      required: ['type'],
      properties: { ...valueSchemaKeywords, description: { type: 'string' } },
    },
  },
  type: 'object',
  additionalProperties: false,
  required: ['tasks'],
  properties: {
    description: { type: 'string' },
    input: {
      type: 'object',
      propertyNames: { pattern: '^[a-z_][a-z0-9_]{0,62}$' },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['type'],
        properties: {
          ...valueSchemaKeywords,
          default: {},
          description: { type: 'string' },
          secret: { type: 'boolean' },
        },
      },
    },
    state_changes: stateSets,
    on: stringOrList,
    serial: {
      anyOf: [
        { type: 'integer', minimum: 1 },
        { type: 'string', pattern: '^(100|[1-9][0-9]?)%$' },
      ],
    },
    max_failed: {
      anyOf: [
        { type: 'integer', minimum: 0 },
        { type: 'string', pattern: '^(100|[1-9]?[0-9])%$' },
      ],
    },
    max_failed_unknown: { type: 'boolean' },
    gate: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      properties: {
        health: expression,
        timeout: { type: 'string', pattern: DURATION_PATTERN },
        interval: { type: 'string', pattern: DURATION_PATTERN },
        approval: { type: 'boolean' },
      },
    },
    where: expression,
    tasks: { type: 'array', minItems: 1, maxItems: 500, items: taskSchema },
  },
};

export const migrationSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['state_changes'],
  properties: {
    description: { type: 'string' },
    state_changes: migrationChanges,
  },
};
