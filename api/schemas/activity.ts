// Schemas of the activity stream (GET /v1/activity).
import type { ActivityOutcome } from '../../db/repos/activity';
import { listSchema, named, pageQueryProperties, type JsonSchema, type ObjectSchema } from './common';

const nullableString = { type: ['string', 'null'] } as const satisfies JsonSchema;

export const activitySchema = named('Activity', {
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'at',
    'actor',
    'actor_kind',
    'jti',
    'source',
    'via',
    'action',
    'target',
    'status',
    'apply_id',
    'execution_id',
  ],
  properties: {
    id: { type: 'string', description: "the row's place in the stream; higher is later" },
    at: { type: 'string', format: 'date-time' },
    actor: { type: 'string', description: "the operator's AID, `keeper:<kid>` (converger) or `keeper:drift-check`" },
    actor_kind: { type: 'string', enum: ['operator', 'converger', 'drift'] },
    jti: {
      ...nullableString,
      description: "the id of the token the call was made with (null for the keeper's own actions)",
    },
    source: { ...nullableString, description: 'the address the call came from' },
    via: { type: 'string', enum: ['api', 'mcp', 'converger', 'drift'] },
    action: {
      type: 'string',
      description:
        "the route (`POST /v1/incarnations/{name}/runs`), the MCP tool (`mcp start-run`) or the keeper's action (`run create`, `drift-check drifted`)",
    },
    target: { ...nullableString, description: 'the path acted on; no request body or query is ever recorded' },
    status: { type: 'integer', description: "the answer's HTTP status (the keeper's own runs: 202)" },
    apply_id: { ...nullableString, description: 'the run or plan the call started' },
    execution_id: { ...nullableString, description: 'the one-off execution the call started (POST /v1/executions)' },
  },
});

export const activityListSchema = listSchema('ActivityList', activitySchema);

export const activityQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...pageQueryProperties,
    actor: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      // No control characters: PostgreSQL text refuses NUL, and no actor name holds one.
      pattern: '^[^\\x00-\\x1f\\x7f]+$',
      description: 'only this actor (an AID, keeper:<kid>, keeper:drift-check)',
    },
    target: {
      type: 'string',
      minLength: 1,
      maxLength: 1000,
      pattern: '^/[^\\x00-\\x1f\\x7f]*$',
      description:
        'a path starting with / (no control characters): only this target and what lies under it (e.g. /v1/incarnations/web)',
    },
    outcome: {
      type: 'string',
      enum: ['ok', 'refused', 'failed'],
      description: 'only calls that succeeded (status below 400), were refused (4xx) or failed in the keeper (5xx)',
    },
    since: { type: 'string', format: 'date-time', description: 'an RFC 3339 time: only rows at or after it' },
    until: { type: 'string', format: 'date-time', description: 'an RFC 3339 time: only rows before it' },
  },
} as const satisfies ObjectSchema;

export interface ActivityQuery {
  limit: number;
  cursor?: string;
  actor?: string;
  target?: string;
  outcome?: ActivityOutcome;
  since?: string;
  until?: string;
}

/** `created_by` and `started_by` on every run and plan answer (api/attribution.ts). */
export const attributionProperties = {
  created_by: {
    type: ['string', 'null'],
    description: "the operator's AID, `keeper:<kid>` (the converger) or `keeper:drift-check`",
  },
  started_by: {
    type: ['string', 'null'],
    enum: ['operator', 'converger', 'drift', null],
    description: 'whether an operator, the converger or a drift check/repair made it',
  },
} as const satisfies Record<string, JsonSchema>;
