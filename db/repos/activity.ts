// The activity stream (docs/api.md "Activity"): appended by the API and MCP for every mutating call,
// and here, by the repositories, for what the keeper does on its own (converger runs, drift repairs,
// drift checks that found something). Read newest first with keyset pages on `id`.
import type { Knex } from 'knex';
import { fetchPageDesc, type Page } from './page';

/** Who acted: an operator (through the API or MCP), the converger, or a drift check or repair. */
export type ActorKind = 'operator' | 'converger' | 'drift';
export type Via = 'api' | 'mcp' | 'converger' | 'drift';

export interface NewActivity {
  actor: string;
  actorKind: ActorKind;
  jti?: string | null;
  source?: string | null;
  via: Via;
  /** The route (`POST /v1/incarnations/{name}/runs`) or MCP tool (`mcp start-run`) or keeper action (`run deploy`). */
  action: string;
  /** What it acted on: the request path with its parameters, or an incarnation's name. */
  target: string | null;
  /** The HTTP status of the answer (for keeper actions: 202 started, 200 found). */
  status: number;
  applyId?: string | null;
  /** The one-off execution the call started (POST /v1/executions). */
  executionId?: string | null;
}

export interface ActivityRecord {
  id: string;
  at: Date;
  actor: string;
  actor_kind: ActorKind;
  jti: string | null;
  source: string | null;
  via: Via;
  action: string;
  target: string | null;
  status: number;
  apply_id: string | null;
  execution_id: string | null;
}

/** Who a run's or plan's `created_by` names: the drift checker, a keeper's converger, or an operator. */
export const DRIFT_ACTOR = 'keeper:drift-check';
export function actorKindOf(createdBy: string | null): ActorKind | null {
  if (createdBy === null) return null;
  if (createdBy === DRIFT_ACTOR) return 'drift';
  return createdBy.startsWith('keeper:') ? 'converger' : 'operator';
}

/** The target of the keeper's own rows: the incarnation's API path, so one target filter finds both. */
export const activityTarget = (incarnation: string) => `/v1/incarnations/${encodeURIComponent(incarnation)}`;

export async function appendActivity(db: Knex | Knex.Transaction, a: NewActivity): Promise<void> {
  await db('activity').insert({
    actor: a.actor,
    actor_kind: a.actorKind,
    jti: a.jti ?? null,
    source: a.source ?? null,
    via: a.via,
    action: a.action,
    target: a.target,
    status: a.status,
    apply_id: a.applyId ?? null,
    execution_id: a.executionId ?? null,
  });
}

/** A row's outcome by its status: succeeded (below 400), refused (4xx) or failed in the keeper (5xx). */
export type ActivityOutcome = 'ok' | 'refused' | 'failed';
const OUTCOME_STATUS: Record<ActivityOutcome, [number, number]> = {
  ok: [0, 399],
  refused: [400, 499],
  failed: [500, 599],
};

export interface ActivityFilter {
  actor?: string;
  target?: string;
  outcome?: ActivityOutcome;
  since?: Date;
  until?: Date;
}

/**
 * Newest first. `target` matches the exact target or anything under it (`/v1/incarnations/web`
 * also finds `/v1/incarnations/web/runs`), and an incarnation's name finds the keeper's own rows.
 */
export async function listActivity(
  db: Knex,
  filter: ActivityFilter,
  page: { limit: number; after?: string },
): Promise<Page<ActivityRecord>> {
  const q = db('activity');
  if (filter.actor !== undefined) q.where({ actor: filter.actor });
  if (filter.target !== undefined) {
    const t = filter.target;
    const like = t.replace(/[\\%_]/g, (c) => `\\${c}`);
    q.where((w) => {
      w.where('target', t).orWhere('target', 'like', `${like}/%`);
    });
  }
  if (filter.outcome !== undefined) q.whereBetween('status', OUTCOME_STATUS[filter.outcome]);
  if (filter.since !== undefined) q.where('at', '>=', filter.since);
  if (filter.until !== undefined) q.where('at', '<', filter.until);
  return fetchPageDesc<ActivityRecord>(q, 'id', page, (r) => String(r.id));
}

/** Removes rows older than `before` (retention); returns how many. */
export async function pruneActivity(db: Knex, before: Date): Promise<number> {
  return db('activity').where('at', '<', before).delete();
}
