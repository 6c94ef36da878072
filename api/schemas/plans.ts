// Plans on the wire (docs/plans.md): what a run would do, host by host and step by step, with the
// diffs; and how it ended (ready to apply, failed, applied, expired).
import { attributionProperties } from './activity';
import { hostInputSchema, inputModeSchema, OPERATION_PATTERN } from './incarnations';
import type { HostInput } from '../../scenario/host-input';
import { APPLY_ID_PATTERN } from './runs';
import { labelSchema, listSchema, named, nullableTimestampSchema, timestampSchema, type ObjectSchema } from './common';

const nullableString = { type: ['string', 'null'] } as const;

export const PLAN_STATUSES = ['planning', 'ready', 'failed', 'applied', 'expired'] as const;
export type PlanStatus = (typeof PLAN_STATUSES)[number];

export const createPlanBody = named('CreatePlan', {
  type: 'object',
  additionalProperties: false,
  required: ['operation'],
  properties: {
    operation: {
      type: 'string',
      pattern: OPERATION_PATTERN,
      description: 'the scenario to plan: scenario/<operation>/main.yml; `upgrade` (with `version`) plans an upgrade',
    },
    input: {
      type: 'object',
      maxProperties: 256,
      description: "as for a run: merged over the input of the incarnation's last committed run",
    },
    input_mode: inputModeSchema,
    allow_empty: {
      type: 'boolean',
      default: false,
      description: 'plan even when the covens hold no onboarded soul (else 400)',
    },
    service: {
      ...labelSchema,
      description: 'the plan of a create only (the incarnation does not exist yet): the catalog service',
    },
    covens: {
      type: 'array',
      items: labelSchema,
      minItems: 1,
      maxItems: 64,
      uniqueItems: true,
      description: 'the plan of a create only: the covens of the incarnation to make',
    },
    version: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      description:
        'the plan of a create: a published version of the service (default: its newest); the plan of an upgrade: the version to move to',
    },
    host_input: {
      ...hostInputSchema,
      description:
        "the plan of a create only: its per-host input (an existing incarnation's is set with PUT .../host-input)",
    },
  },
} as const satisfies ObjectSchema);
export interface CreatePlanInput {
  operation: string;
  input?: Record<string, unknown>;
  input_mode?: 'merge' | 'replace';
  allow_empty?: boolean;
  service?: string;
  covens?: string[];
  version?: string;
  host_input?: HostInput;
}

export const planParams = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'plan_id'],
  properties: { name: labelSchema, plan_id: { type: 'string', pattern: APPLY_ID_PATTERN } },
} as const satisfies ObjectSchema;

export const planSummarySchema = named('PlanSummary', {
  type: 'object',
  additionalProperties: false,
  required: [
    'plan_id',
    'incarnation',
    'operation',
    'status',
    'error',
    'service_ref',
    'service_commit',
    'based_on',
    'summary',
    'created_at',
    'finished_at',
    'expires_at',
    'applied_by',
    'upgrade',
    'created_by',
    'started_by',
  ],
  properties: {
    ...attributionProperties,
    plan_id: { type: 'string', description: 'also the Temporal workflow id of the check' },
    incarnation: { type: 'string' },
    operation: {
      type: 'string',
      description:
        'the planned operation; `upgrade` for the plan of an upgrade (its steps preview `upgrade.operation`)',
    },
    status: {
      type: 'string',
      enum: [...PLAN_STATUSES],
      description: '`ready`: every host answered its check and the plan can be applied until `expires_at`',
    },
    error: nullableString,
    service_ref: nullableString,
    service_commit: nullableString,
    based_on: {
      ...nullableString,
      description:
        "the incarnation's last committed run when the plan was made; another commit since makes the plan stale (409 on apply)",
    },
    summary: {
      type: ['object', 'null'],
      description: 'host counts by outcome and `would_change`, the number of steps that would change something',
    },
    created_at: timestampSchema,
    finished_at: nullableTimestampSchema,
    expires_at: timestampSchema,
    applied_by: { ...nullableString, description: 'the run that applied this plan' },
    upgrade: {
      type: ['object', 'null'],
      description:
        'the plan of an upgrade: `version` it moves to, `from_version`/`to_version` (state_schema_version), `migrations` it would run, `state_before`/`state_after`, `operation` (the last committed operation, whose steps at that version the hosts show on the migrated state) and `next` (what to run: the upgrade, then a run of that operation)',
    },
  },
} as const satisfies ObjectSchema);

const planStepSchema = {
  type: 'object',
  required: ['index', 'name', 'module', 'status', 'would_change', 'output', 'skip_reason', 'diff'],
  properties: {
    index: { type: 'integer' },
    name: nullableString,
    module: { type: 'string' },
    status: {
      type: 'string',
      enum: ['ok', 'changed', 'failed', 'unknown', 'skipped'],
      description: '`changed`: applying would change something here',
    },
    would_change: { type: 'boolean' },
    output: { type: 'string', description: "the state module's answer: what it would do, or why the check failed" },
    skip_reason: { type: ['string', 'null'], description: 'why the step would not run on this host' },
    diff: {
      type: ['object', 'null'],
      description:
        'files: content `digest` (the keeper\'s keyed digest, never a plain hash) and size before and after, `unified` (a diff -u of the content), mode, owner, group; a file that holds or will hold a secret shows no content and no size: `content.secret: true`, "secret content changed"; packages: from and to version',
    },
  },
} as const;

export const planSchema = named('Plan', {
  type: 'object',
  required: [...planSummarySchema.required, 'input', 'render_errors', 'hosts'],
  properties: {
    ...planSummarySchema.properties,
    input: { type: 'object' },
    render_errors: { type: ['array', 'null'] },
    hosts: {
      type: 'array',
      items: {
        type: 'object',
        required: ['sid', 'status', 'reason', 'steps'],
        properties: {
          sid: { type: 'string' },
          status: { type: 'string', enum: ['pending', 'ok', 'changed', 'failed', 'unknown', 'skipped'] },
          reason: nullableString,
          steps: { type: 'array', items: planStepSchema },
          facts: {
            type: ['object', 'null'],
            description:
              'the facts render used for this host (its soulprint and covens); an apply refuses the plan when one it read changed',
          },
          facts_read: {
            type: ['array', 'null'],
            items: { type: 'string' },
            description:
              'the facts render read for this host (top-level names; `*`: it listed them all); the plan is stale when one of these changed, never for another. null: a plan made before reads were recorded (every fact counts)',
          },
          host_input: {
            type: ['object', 'null'],
            description:
              "this host's input as rendered when per-host input applied to it (its covens' and its sid's entries over the plan's `input`, defaults filled in, secret inputs as references); null: the plan's `input`",
          },
        },
      },
    },
  },
} as const satisfies ObjectSchema);

export const planListSchema = listSchema('PlanList', planSummarySchema);

export const planAcceptedSchema = named('PlanAccepted', {
  type: 'object',
  additionalProperties: false,
  required: ['plan_id', 'incarnation', 'operation', 'status', 'plan', 'expires_at'],
  properties: {
    plan_id: { type: 'string' },
    incarnation: { type: 'string' },
    operation: { type: 'string' },
    status: { type: 'string', enum: ['planning'] },
    plan: { type: 'string', description: 'the plan URL path' },
    expires_at: timestampSchema,
  },
} as const satisfies ObjectSchema);
