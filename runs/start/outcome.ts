// What starting a run answers, for every starter (the API, MCP through it, the converger, drift
// repair): accepted with the run's ids, or refused with the kind of refusal, the field it is about
// and the reason, and nothing recorded. No HTTP here: the API maps a kind to a status.
import { RepoConflict, RepoNotFound } from '../../db/repos/errors';

/** Why a start is refused: bad input, a name that does not exist, a state that forbids it now, a
 *  repository that cannot be used, or a dependency that does not answer (retry shortly). */
export type RefusalKind = 'invalid' | 'not_found' | 'conflict' | 'unprocessable' | 'unavailable';

/** A field (JSON pointer into what the starter sent, e.g. `/body/covens`) and the rule it breaks. */
export interface FieldProblem {
  path: string;
  message: string;
}

export interface RunAccepted {
  accepted: true;
  /** The run's apply_id, or a plan's plan_id. */
  applyId: string;
  incarnation: string;
  operation: string;
  /** Only for a plan: when it can no longer be applied. */
  expiresAt?: Date;
  /** Only for a run recorded behind a converge run: that run's apply_id; this one starts when it ends. */
  waitsFor?: string;
}

export interface RunRefused {
  accepted: false;
  kind: RefusalKind;
  /** The first field named, null when the refusal is about no one field (a lock, an outage). */
  field: string | null;
  reason: string;
  fields: FieldProblem[];
}

export type RunOutcome = RunAccepted | RunRefused;

/** Thrown inside the service where the saga stops; `outcomeOf` turns it into a RunRefused. */
export class Refusal extends Error {
  constructor(
    readonly kind: RefusalKind,
    readonly reason: string,
    readonly fields: FieldProblem[] = [],
  ) {
    super(reason);
    this.name = 'Refusal';
  }

  refused(): RunRefused {
    return {
      accepted: false,
      kind: this.kind,
      field: this.fields[0]?.path ?? null,
      reason: this.reason,
      fields: this.fields,
    };
  }
}

export const refuse = {
  invalid: (reason: string, fields: FieldProblem[]) => new Refusal('invalid', reason, fields),
  notFound: (reason: string) => new Refusal('not_found', reason),
  conflict: (reason: string) => new Refusal('conflict', reason),
  unprocessable: (reason: string, fields: FieldProblem[]) => new Refusal('unprocessable', reason, fields),
  /** `what` does not answer: the same sentence wherever it is shown. */
  unavailable: (what: string) => new Refusal('unavailable', `${what} is not answering; retry shortly`),
  /** Temporal is away: the sentence names it and the fix (TEMPORAL_UNAVAILABLE). */
  temporal: (detail: string = TEMPORAL_UNAVAILABLE) => new Refusal('unavailable', detail),
};

/**
 * Why a run, plan, execution or drift schedule is refused while Temporal is away (issue 45: the
 * keeper serves everything else meanwhile), and what to do: the keeper connects again by itself.
 */
export const TEMPORAL_UNAVAILABLE =
  'the workflow engine (Temporal) is not answering, so nothing was started: runs, plans, executions and drift checks need it. ' +
  'The keeper connects again by itself: retry once /readyz shows "temporal": "up"; if it stays down, check temporal.address in the keeper config and that the Temporal frontend runs';

/** The same, for a run already recorded when Temporal refused its start (runs/start/launch.ts). */
export const TEMPORAL_REFUSED_RUN =
  'the workflow engine (Temporal) did not start the run: the run is recorded as failed and the incarnation locked. ' +
  'Once /readyz shows "temporal": "up", unlock it with retry (POST /v1/incarnations/{name}/unlock {"retry": true})';

/** Runs one start; a refusal (the service's own, or a repository's lock or not-found) becomes the outcome. */
export async function outcomeOf(start: () => Promise<RunAccepted>): Promise<RunOutcome> {
  try {
    return await start();
  } catch (err) {
    return refusedOf(err) ?? Promise.reject(err);
  }
}

export function refusedOf(err: unknown): RunRefused | undefined {
  if (err instanceof Refusal) return err.refused();
  // The lock is taken in PostgreSQL (db/repos/incarnations.ts beginRun): busy or locked is a conflict.
  if (err instanceof RepoConflict)
    return { accepted: false, kind: 'conflict', field: null, reason: err.message, fields: [] };
  if (err instanceof RepoNotFound)
    return { accepted: false, kind: 'not_found', field: null, reason: err.message, fields: [] };
  return undefined;
}
