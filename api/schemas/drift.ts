// Drift checks on the wire (docs/drift.md): the setting an operator sends, and what an incarnation shows.
import { named, nullableTimestampSchema, type ObjectSchema } from './common';

export const driftCheckBody = named('DriftCheck', {
  type: 'object',
  additionalProperties: false,
  required: ['interval'],
  properties: {
    interval: {
      type: ['string', 'null'],
      pattern: '^[0-9]{1,7}(s|m|h|d)$',
      description: 'how often to check, e.g. "10m" (2s..30d); null turns checks off',
    },
    auto_repair: {
      type: 'boolean',
      default: false,
      description: "apply a drifted check's plan at once (the hosts are put back as committed)",
    },
  },
} as const satisfies ObjectSchema);
export interface DriftCheckInput {
  interval: string | null;
  auto_repair?: boolean;
}

export const driftSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'interval',
    'auto_repair',
    'status',
    'checked_at',
    'plan_id',
    'drifted_sids',
    'checks_in_sync',
    'last_in_sync_at',
  ],
  description: 'scheduled drift checks: the setting and the last check',
  properties: {
    interval: { type: ['string', 'null'], description: 'null: not checked on a schedule' },
    auto_repair: { type: 'boolean' },
    status: {
      type: 'string',
      enum: ['unchecked', 'in_sync', 'drifted', 'check_failed'],
      description: '`check_failed`: a host did not answer its check or the plan failed',
    },
    checked_at: nullableTimestampSchema,
    plan_id: { type: ['string', 'null'], description: 'the last check (a plan): per host the diffs' },
    drifted_sids: {
      type: 'array',
      items: { type: 'string' },
      description: 'hosts that no longer match the committed state',
    },
    checks_in_sync: {
      type: 'integer',
      minimum: 0,
      description:
        'how many checks found every host in sync (never reset); such a check keeps its plan only while it is the last check',
    },
    last_in_sync_at: {
      ...nullableTimestampSchema,
      description: 'when the last check that found every host in sync ended',
    },
  },
} as const;
