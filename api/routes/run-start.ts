// The API side of starting a run: the routes decode the request, call the run service
// (runs/start/service.ts) and answer its outcome here: accepted is 202 with the run (or plan) and
// where to follow it; refused is the problem for its kind, naming the field, nothing recorded.
import type { RunOutcome } from '../../runs/index';
import type { IncarnationRecord } from '../../db/repos/incarnations';
import type { ApiDeps } from '../deps';
import { refusedProblem } from '../problems';

/** 202 with the run, or the refusal as a problem. */
export function runAnswer(deps: ApiDeps, outcome: RunOutcome) {
  if (!outcome.accepted) throw refusedProblem(outcome);
  const url = `/v1/incarnations/${outcome.incarnation}/runs/${outcome.applyId}`;
  return {
    status: 202,
    body: {
      apply_id: outcome.applyId,
      incarnation: outcome.incarnation,
      operation: outcome.operation,
      status: 'applying',
      run: url,
      temporal_ui: uiLink(deps, outcome.applyId),
      ...(outcome.waitsFor ? { waits_for: outcome.waitsFor } : {}),
    },
    headers: { Location: url },
  };
}

/** 202 with the plan and when it expires, or the refusal as a problem. */
export function planAnswer(outcome: RunOutcome) {
  if (!outcome.accepted) throw refusedProblem(outcome);
  const url = `/v1/incarnations/${outcome.incarnation}/plans/${outcome.applyId}`;
  return {
    status: 202,
    headers: { Location: url },
    body: {
      plan_id: outcome.applyId,
      incarnation: outcome.incarnation,
      operation: outcome.operation,
      status: 'planning' as const,
      plan: url,
      expires_at: (outcome.expiresAt ?? new Date()).toISOString(),
    },
  };
}

export const uiLink = (deps: ApiDeps, applyId: string) => deps.runs.uiLink(applyId);

/** The incarnation, or 404 saying when a deleted one had the name (the service's refusal, mapped by toProblem). */
export const mustIncarnation = (deps: ApiDeps, name: string): Promise<IncarnationRecord> => deps.runs.incarnation(name);
