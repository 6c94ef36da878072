// The activity stream (docs/api.md "Activity"): who changed what, when, from where and with what
// outcome, newest first, filtered by actor, target and time. Read-only: rows are appended by
// api/activity.ts (API and MCP) and by the repositories (the keeper's own runs and drift findings).
import { listActivity, type ActivityRecord } from '../../db/repos/activity';
import { decodeCursor, pageBody } from '../pagination';
import { problems } from '../problems';
import { defineRoute } from '../route';
import { activityListSchema, activityQuerySchema, type ActivityQuery } from '../schemas/activity';

function view(a: ActivityRecord) {
  return {
    id: String(a.id),
    at: a.at.toISOString(),
    actor: a.actor,
    actor_kind: a.actor_kind,
    jti: a.jti,
    source: a.source,
    via: a.via,
    action: a.action,
    target: a.target,
    status: a.status,
    apply_id: a.apply_id,
    execution_id: a.execution_id,
  };
}

/** RFC 3339 allows what a Date cannot hold (a leap second `23:59:60`): refused, naming the field, never a 500. */
function timeOf(value: string | undefined, field: 'since' | 'until'): Date | undefined {
  if (value === undefined) return undefined;
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) {
    throw problems.invalid(`${field} is not a time this keeper can compare`, [
      { path: `/query/${field}`, message: 'must be an RFC 3339 time without a leap second' },
    ]);
  }
  return at;
}

export const activityRoutes = [
  defineRoute<Record<string, never>, ActivityQuery>({
    method: 'get',
    path: '/v1/activity',
    operationId: 'listActivity',
    tag: 'Activity',
    permission: 'activity:read',
    summary: 'List the activity stream',
    description:
      'Every change made through the API or MCP (whatever its outcome), every run the converger or a drift repair started and every drift check that found drift, newest first. ' +
      'Filters: actor, target (a path and what lies under it), outcome (ok, refused, failed), since/until. Kept for retention.activity (docs/configuration.md).',
    query: activityQuerySchema,
    responses: { 200: { description: 'rows newest first', schema: activityListSchema } },
    async handler({ query, deps }) {
      const since = timeOf(query.since, 'since');
      const until = timeOf(query.until, 'until');
      if (since && until && since.getTime() > until.getTime()) {
        throw problems.invalid('since lies after until', [
          { path: '/query/since', message: 'must not lie after until' },
        ]);
      }
      const after = decodeCursor(query.cursor, /^[1-9][0-9]{0,18}$/);
      const page = await listActivity(
        deps.runtime.db,
        { actor: query.actor, target: query.target, outcome: query.outcome, since, until },
        { limit: query.limit, ...(after ? { after } : {}) },
      );
      return { status: 200, body: pageBody(page, view) };
    },
  }),
];
