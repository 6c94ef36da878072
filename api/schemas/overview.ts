// GET /v1/overview: the fleet at a glance (issue 35; docs/ui.md "Overview").
import { named, nullableTimestampSchema, timestampSchema, type JsonSchema, type ObjectSchema } from './common';

const int = { type: 'integer', minimum: 0 } as const;
const counts = (keys: readonly string[], description: string, signed = false): ObjectSchema => ({
  type: 'object',
  additionalProperties: false,
  required: [...keys],
  description,
  properties: Object.fromEntries(keys.map((k) => [k, signed ? { type: 'integer' } : int])),
});
const obj = (required: string[], properties: Record<string, JsonSchema>, description?: string): ObjectSchema => ({
  type: 'object',
  additionalProperties: false,
  required,
  properties,
  ...(description ? { description } : {}),
});

export const overviewRunSchema = named(
  'OverviewRun',
  obj(
    [
      'apply_id',
      'incarnation',
      'operation',
      'status',
      'error',
      'created_at',
      'finished_at',
      'duration_ms',
      'hosts',
      'hosts_changed',
      'hosts_failed',
    ],
    {
      apply_id: { type: 'string' },
      incarnation: { type: 'string' },
      operation: { type: 'string' },
      status: { type: 'string', enum: ['running', 'succeeded', 'failed'] },
      error: { type: ['string', 'null'], description: 'why the run failed' },
      created_at: timestampSchema,
      finished_at: nullableTimestampSchema,
      duration_ms: { type: ['integer', 'null'], description: 'finished_at - created_at; null while running' },
      hosts: int,
      hosts_changed: int,
      hosts_failed: int,
    },
  ),
);

export function overviewSchema(
  soulStatuses: readonly string[],
  incStatuses: readonly string[],
  driftStatuses: readonly string[],
) {
  return named(
    'Overview',
    obj(['generated_at', 'souls', 'incarnations', 'attention', 'failed_runs', 'last_runs', 'charts'], {
      generated_at: timestampSchema,
      souls: obj(['total', 'by_status', 'change_1h'], {
        total: int,
        by_status: counts(soulStatuses, 'souls per registry status now'),
        change_1h: counts(
          soulStatuses,
          'now minus one hour ago, per status (e.g. connected -3: three fewer connected souls than an hour ago)',
          true,
        ),
      }),
      incarnations: obj(['total', 'by_status', 'by_drift'], {
        total: int,
        by_status: counts(incStatuses, 'incarnations per status'),
        by_drift: counts(driftStatuses, 'incarnations per drift status'),
      }),
      attention: {
        type: 'array',
        description:
          'incarnations that are error_locked (first) or drifted or whose drift check failed, in natural name order (at most 50)',
        items: obj(['incarnation', 'status', 'drift_status', 'drifted_hosts', 'reason', 'apply_id'], {
          incarnation: { type: 'string' },
          status: { type: 'string' },
          drift_status: { type: 'string' },
          drifted_hosts: { type: 'array', items: { type: 'string' } },
          reason: { type: 'string', description: "the last run's error, or what drifted" },
          apply_id: { type: ['string', 'null'], description: 'the last run' },
        }),
      },
      failed_runs: {
        type: 'array',
        items: overviewRunSchema,
        description: 'runs that failed in the last 24 hours, newest first (at most 50)',
      },
      last_runs: { type: 'array', items: overviewRunSchema, description: 'the 10 newest runs' },
      charts: obj(['runs_per_hour', 'duration_per_day', 'hosts_changed_per_run', 'connected_souls'], {
        runs_per_hour: {
          type: 'array',
          description:
            '24 full hours counted back from generated_at, oldest first: runs started in each hour by their outcome',
          items: obj(['hour', 'succeeded', 'failed', 'running'], {
            hour: timestampSchema,
            succeeded: int,
            failed: int,
            running: int,
          }),
        },
        duration_per_day: {
          type: 'array',
          description:
            'finished runs per UTC day of the last 14 days (days without runs left out): median and 95th percentile duration',
          items: obj(['day', 'runs', 'median_ms', 'p95_ms'], {
            day: timestampSchema,
            runs: int,
            median_ms: int,
            p95_ms: int,
          }),
        },
        hosts_changed_per_run: {
          type: 'array',
          description: 'the 30 newest finished runs, oldest first: hosts changed (and hosts in the run)',
          items: obj(['apply_id', 'incarnation', 'created_at', 'hosts', 'hosts_changed'], {
            apply_id: { type: 'string' },
            incarnation: { type: 'string' },
            created_at: timestampSchema,
            hosts: int,
            hosts_changed: int,
          }),
        },
        connected_souls: {
          type: 'array',
          description:
            'connected souls at each hour of the last 24 h (25 points, oldest first), from the recorded status changes',
          items: obj(['at', 'connected'], { at: timestampSchema, connected: int }),
        },
      }),
    }),
  );
}
