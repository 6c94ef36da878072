// Incarnations (interface spec 2.4) on the wire, and the bodies that start their runs (the run
// answers are in ./runs.ts). Inputs are free-form objects whose values the scenario's `input:` block
// checks at render time.
import { APPLY_ID_PATTERN, runSummarySchema } from './runs';
import { INCARNATION_STATUSES } from '../../db/repos/incarnations';
import { driftSchema } from './drift';
import type { HostInput } from '../../scenario/host-input';
import { refSchema, yankSchema } from './services';
import {
  LABEL_PATTERN,
  labelSchema,
  listSchema,
  sidSchema,
  named,
  pageQueryProperties,
  timestampSchema,
  type ObjectSchema,
} from './common';

export const INCARNATION_NAME_PATTERN = new RegExp(LABEL_PATTERN);
export const OPERATION_PATTERN = '^[a-z0-9][a-z0-9_-]{0,62}$';
const allowEmptySchema = {
  type: 'boolean',
  default: false,
  description: 'start the run even when its covens hold no onboarded soul (else 400)',
} as const;

const inputSchema = {
  type: 'object',
  maxProperties: 256,
  description:
    "values for the scenario's `input:` block. An input the scenario declares `secret: true` takes a `secretstore:<path>#<field>` reference, or a value that the keeper writes into the secrets store at once and replaces by its reference (docs/secrets.md)",
} as const;
/** Per-host input (scenario/host-input.ts, docs/incarnations.md "Per-host input"). */
export const hostInputSchema = named('HostInput', {
  type: 'object',
  additionalProperties: false,
  description:
    "input for some hosts, merged over the incarnation's input for them: each of the host's covens' entry (in the order of the incarnation's `covens`), then its sid's entry; a named key replaces, `null` removes it (back to the default). Checked against the same input declarations; a secret input takes a `secretstore:<path>#<field>` reference only",
  properties: {
    hosts: {
      type: 'object',
      maxProperties: 10000,
      propertyNames: sidSchema,
      additionalProperties: { type: 'object', maxProperties: 256 },
      description: "by sid: the host's own input, over its covens' entries",
    },
    covens: {
      type: 'object',
      maxProperties: 64,
      propertyNames: labelSchema,
      additionalProperties: { type: 'object', maxProperties: 256 },
      description: "by coven (one of the incarnation's covens)",
    },
  },
} as const satisfies ObjectSchema);
/** As answered: references only (a secret value is never accepted per host, so none is ever stored). */
const hostInputView = {
  anyOf: [hostInputSchema, { type: 'null' }],
  description: 'the per-host input (null: none), as set at create or with PUT .../host-input',
} as const;

const covensSchema = {
  type: 'array',
  items: labelSchema,
  minItems: 1,
  maxItems: 64,
  uniqueItems: true,
  description: 'hosts carrying any of these covens receive the scenarios',
} as const;
const statusSchema = { type: 'string', enum: [...INCARNATION_STATUSES] } as const;
const nullableString = { type: ['string', 'null'] } as const;

export const incarnationSchema = named('Incarnation', {
  type: 'object',
  additionalProperties: false,
  required: [
    'name',
    'service',
    'covens',
    'status',
    'state',
    'state_schema_version',
    'version',
    'version_yanked',
    'service_commit',
    'newer_version',
    'apply_id',
    'last_run',
    'drift',
    'created_at',
    'updated_at',
  ],
  properties: {
    name: labelSchema,
    service: { type: 'string' },
    covens: { type: 'array', items: { type: 'string' } },
    status: {
      ...statusSchema,
      description: '`applying` while a run holds the lock, `ready`, or `error_locked` after a failed run',
    },
    state: { type: 'object', description: 'the last committed state' },
    state_schema_version: { type: ['integer', 'null'] },
    version: {
      ...nullableString,
      description: 'the published service version the incarnation runs with; every run applies its pinned commit',
    },
    version_yanked: {
      ...yankSchema,
      description:
        'set when the version the incarnation runs with was yanked (why, by whom, when): it keeps running; upgrade to another version',
    },
    service_commit: { ...nullableString, description: 'the commit of the last committed run' },
    newer_version: {
      ...nullableString,
      description:
        'the service\'s newest published version that is not yanked, when it is not this one and was published after it (upgrade with POST .../upgrade {"version"})',
    },
    apply_id: { ...nullableString, description: 'the latest run' },
    last_run: { anyOf: [runSummarySchema, { type: 'null' }] },
    drift: driftSchema,
    host_input: hostInputView,
    pending_hosts: {
      type: 'array',
      description:
        'GET one incarnation only: hosts its committed state has not reached (failed or unknown in a run that committed within its failure budget); the converger brings them in when their soul comes back',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['sid', 'status', 'reason', 'apply_id', 'since'],
        properties: {
          sid: { type: 'string' },
          status: { enum: ['failed', 'unknown'] },
          reason: nullableString,
          apply_id: { type: 'string' },
          since: timestampSchema,
        },
      },
    },
    created_at: timestampSchema,
    updated_at: timestampSchema,
  },
} as const satisfies ObjectSchema);

export const incarnationListSchema = listSchema('IncarnationList', incarnationSchema);

export const createIncarnationBody = named('CreateIncarnation', {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'service', 'covens'],
  properties: {
    name: { ...labelSchema, description: 'unique incarnation name' },
    service: { ...labelSchema, description: 'a catalog service' },
    version: { ...refSchema, description: 'a published version of the service; default: its newest' },
    covens: covensSchema,
    input: inputSchema,
    host_input: hostInputSchema,
    allow_empty: allowEmptySchema,
  },
} as const satisfies ObjectSchema);

/** How `input` meets the last input (scenario/input-merge.ts); `replace` is the rule before issue 30. */
export const inputModeSchema = {
  type: 'string',
  enum: ['merge', 'replace'],
  description: '`merge` (default): `input` over the last input; `replace`: `input` is the whole input',
} as const;

export const startRunBody = named('StartRun', {
  type: 'object',
  additionalProperties: false,
  description: 'either `operation` (with `input`), rendered now, or `plan_id` alone: exactly the steps of that plan',
  properties: {
    operation: { type: 'string', pattern: OPERATION_PATTERN, description: 'runs scenario/<operation>/main.yml' },
    plan_id: {
      type: 'string',
      pattern: APPLY_ID_PATTERN,
      description:
        'apply this plan (POST .../plans) and nothing else; refused when a host drifted since (docs/plans.md)',
    },
    input: {
      ...inputSchema,
      description:
        "values for the scenario's `input:` block, merged over the input of the incarnation's last committed run: named keys replace, the rest stay, `null` removes a key (docs/runs.md)",
    },
    input_mode: inputModeSchema,
    allow_empty: allowEmptySchema,
    max_failed: {
      anyOf: [
        { type: 'integer', minimum: 0 },
        { type: 'string', pattern: '^([0-9]{1,9}|(100|[1-9]?[0-9])%)$' },
      ],
      description:
        "this run's failure budget (hosts, or \"5%\" of the targeted hosts), at most the scenario's `max_failed:`; default: the scenario's (docs/runs.md)",
    },
  },
} as const satisfies ObjectSchema);

export const unlockBody = named('Unlock', {
  type: 'object',
  additionalProperties: false,
  properties: {
    retry: {
      type: 'boolean',
      default: false,
      description: 'run the failed operation again at once (202 with a new apply_id)',
    },
    input: {
      ...inputSchema,
      description: "with retry: merged over the failed run's input (as for a run); default: the failed run's input",
    },
    input_mode: inputModeSchema,
    force_render: {
      type: 'boolean',
      default: false,
      description:
        'with retry, after a run whose plan found drift: apply a fresh render nobody reviewed (else 409: make a new plan)',
    },
  },
} as const satisfies ObjectSchema);

export const upgradeBody = named('Upgrade', {
  type: 'object',
  additionalProperties: false,
  properties: {
    version: {
      ...refSchema,
      description:
        "a published version of the incarnation's service to move to: its state migrations run (forward only), then every run applies its pinned commit",
    },
    to_version: {
      type: 'integer',
      minimum: 1,
      description:
        "without `version`: the target state_schema_version at the incarnation's own version; default: the one its commit expects",
    },
  },
} as const satisfies ObjectSchema);

export const deleteIncarnationQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    force: {
      type: 'boolean',
      default: false,
      description:
        'remove the record without running anything (needs incarnations:force-delete); the hosts keep what was applied',
    },
  },
} as const satisfies ObjectSchema;
export interface DeleteIncarnationQuery {
  force: boolean;
}

export const deletedSchema = named('IncarnationRemoved', {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'removed', 'forced', 'history'],
  properties: {
    name: { type: 'string' },
    removed: { type: 'boolean' },
    forced: { type: 'boolean' },
    history: { type: 'string', description: "where the deleted incarnation's history stays readable" },
  },
} as const satisfies ObjectSchema);

export const nameParams = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: labelSchema },
} as const satisfies ObjectSchema;

export const listIncarnationsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...pageQueryProperties,
    status: { ...statusSchema, description: 'only incarnations in this status' },
    service: { ...labelSchema, description: 'only incarnations of this service' },
  },
} as const satisfies ObjectSchema;

export const historySchema = listSchema('IncarnationHistory', {
  type: 'object',
  required: ['id', 'apply_id', 'operation', 'state', 'state_schema_version', 'service_commit', 'created_at', 'run'],
  properties: {
    id: { type: 'string' },
    apply_id: { type: 'string' },
    operation: { type: 'string' },
    state: { type: 'object' },
    state_schema_version: { type: ['integer', 'null'] },
    service_commit: nullableString,
    created_at: timestampSchema,
    run: { anyOf: [runSummarySchema, { type: 'null' }] },
    host_input: {
      ...hostInputView,
      description: 'the per-host input the run rendered with (null: none)',
    },
  },
});

export interface CreateIncarnationInput {
  name: string;
  service: string;
  version?: string;
  covens: string[];
  input?: Record<string, unknown>;
  host_input?: HostInput;
  allow_empty?: boolean;
}
export interface StartRunInput {
  operation?: string;
  plan_id?: string;
  input?: Record<string, unknown>;
  input_mode?: 'merge' | 'replace';
  allow_empty?: boolean;
  max_failed?: string | number;
}
export interface UnlockInput {
  retry?: boolean;
  input?: Record<string, unknown>;
  input_mode?: 'merge' | 'replace';
  force_render?: boolean;
}
export interface UpgradeInput {
  version?: string;
  to_version?: number;
}
export interface ListIncarnationsQuery {
  limit: number;
  cursor?: string;
  status?: (typeof INCARNATION_STATUSES)[number];
  service?: string;
}
