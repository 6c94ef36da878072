// Runs on the wire: the run summary (in lists and in an incarnation's `last_run`), the answer to a
// started run, the run report and its query, the path parameters naming a run.
import { attributionProperties } from './activity';
import { listSchema, named, nullableTimestampSchema, timestampSchema, type ObjectSchema, labelSchema } from './common';

export const APPLY_ID_PATTERN = '^[a-z0-9][a-z0-9_.-]{0,199}$';
export const APPLY_ID_RE = new RegExp(APPLY_ID_PATTERN);
const nullableString = { type: ['string', 'null'] } as const;

/** A running run waiting at a gate between `serial:` batches (docs/runs.md "Gates between batches"). */
export const runWaitingSchema = {
  type: ['object', 'null'],
  additionalProperties: false,
  required: ['for', 'batch', 'since'],
  description:
    'what the running run waits for at its `gate:`: `health` (its health check, `health` the expression) or `approval` ' +
    '(POST .../approve), after which batch, since when; null: not waiting',
  properties: {
    for: { type: 'string', enum: ['health', 'approval'] },
    batch: { type: 'integer', minimum: 1 },
    health: { type: 'string' },
    since: timestampSchema,
  },
} as const;

export const runSummarySchema = named('RunSummary', {
  type: 'object',
  additionalProperties: false,
  required: [
    'apply_id',
    'operation',
    'status',
    'phase',
    'service_ref',
    'service_commit',
    'error',
    'summary',
    'created_at',
    'finished_at',
    'temporal_ui',
    'created_by',
    'started_by',
  ],
  properties: {
    ...attributionProperties,
    apply_id: { type: 'string', description: 'also the Temporal workflow id' },
    operation: { type: 'string' },
    status: { type: 'string', enum: ['running', 'succeeded', 'failed'] },
    phase: { type: 'string', enum: ['queued', 'rendering', 'dispatching', 'committing', 'done'] },
    service_ref: nullableString,
    service_commit: nullableString,
    error: nullableString,
    summary: {
      type: ['object', 'null'],
      description: 'host counts by outcome; `changed: false` when the run changed nothing',
    },
    created_at: timestampSchema,
    finished_at: nullableTimestampSchema,
    temporal_ui: { type: 'string', description: 'this run in the Temporal Web UI' },
    target_sids: {
      type: ['array', 'null'],
      items: { type: 'string' },
      description: 'a run limited to these hosts: a new soul converging (docs/runs.md); null: every host of the covens',
    },
    plan_id: {
      ...nullableString,
      description: 'the plan this run applied, step for step (docs/plans.md); null: rendered at its start',
    },
    waits_for: {
      ...nullableString,
      description:
        'the converge run this run was started behind: it took the lock when that run ended (docs/runs.md "Converging new hosts"); null: it took the lock at once',
    },
    waiting: runWaitingSchema,
  },
} as const satisfies ObjectSchema);

export const runListSchema = listSchema('RunList', runSummarySchema);

export const acceptedSchema = named('RunAccepted', {
  type: 'object',
  additionalProperties: false,
  required: ['apply_id', 'incarnation', 'operation', 'status', 'run', 'temporal_ui'],
  properties: {
    apply_id: { type: 'string' },
    incarnation: { type: 'string' },
    operation: { type: 'string' },
    status: { type: 'string', description: 'the incarnation status: applying' },
    run: { type: 'string', description: 'the run report URL path' },
    temporal_ui: { type: 'string' },
    waits_for: {
      type: 'string',
      description:
        'present when a converge run held the lock: this run waits for that run (its apply_id) and starts when it ends (docs/runs.md "Converging new hosts")',
    },
  },
} as const satisfies ObjectSchema);

export const runParams = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'apply_id'],
  properties: { name: labelSchema, apply_id: { type: 'string', pattern: APPLY_ID_PATTERN } },
} as const satisfies ObjectSchema;

export const runReportQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    wait: {
      type: 'string',
      pattern: '^[0-9]{1,6}(ms|s)$',
      description: 'hold the answer until the run ends, at most this long (e.g. `30s`, at most 60s)',
    },
  },
} as const satisfies ObjectSchema;
export interface RunReportQuery {
  wait?: string;
}

const stepSchema = {
  type: 'object',
  required: [
    'index',
    'name',
    'module',
    'status',
    'changed',
    'output',
    'attempts',
    'replayed',
    'started_at',
    'finished_at',
  ],
  properties: {
    index: { type: 'integer' },
    name: nullableString,
    module: { type: 'string' },
    status: { type: 'string', enum: ['ok', 'changed', 'failed', 'unknown', 'skipped'] },
    changed: { type: 'boolean' },
    output: { type: 'string' },
    attempts: { type: 'integer' },
    replayed: { type: 'boolean', description: "answered from the soul's ledger: applied by an earlier delivery" },
    changed_when: {
      ...nullableString,
      description:
        "the step's changed_when expression when it overrode the module's answer: `changed` is its verdict and the module said the opposite; null when the module's answer stands",
    },
    skip_reason: {
      type: ['string', 'null'],
      enum: [
        'on',
        'where',
        'when',
        'loop',
        'require',
        'onchanges',
        'earlier_failure',
        'secret_unavailable',
        'drift',
        null,
      ],
      description: 'why a `skipped` step did not run on this host',
    },
    diff: {
      type: ['object', 'null'],
      description:
        'what the step changed, as the soul described it: file content digests (keyed by the keeper; no content and no size for a file that holds a secret), mode, owner, group; package versions',
    },
    started_at: nullableTimestampSchema,
    finished_at: nullableTimestampSchema,
  },
} as const;

export const runReportSchema = named('RunReport', {
  type: 'object',
  required: [...runSummarySchema.required, 'incarnation', 'input', 'render_errors', 'hosts'],
  properties: {
    ...runSummarySchema.properties,
    incarnation: { type: 'string' },
    input: { type: 'object' },
    render_errors: {
      type: ['array', 'null'],
      description: 'file, line, col, rule, message, fix: why the run failed before anything was applied',
    },
    hosts: {
      type: 'array',
      items: {
        type: 'object',
        required: ['sid', 'status', 'kid', 'reason', 'batch', 'steps'],
        properties: {
          sid: { type: 'string' },
          status: {
            type: 'string',
            enum: ['pending', 'ok', 'changed', 'failed', 'unknown', 'skipped'],
            description: '`pending` with a reason: registered, not yet onboarded, not targeted',
          },
          kid: nullableString,
          reason: nullableString,
          batch: { type: ['integer', 'null'] },
          steps: { type: 'array', items: stepSchema },
        },
      },
    },
  },
} as const satisfies ObjectSchema);
