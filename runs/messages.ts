// The messages between the run workflows and their activities. Only names, counts and host ids
// travel through Temporal: inputs, rendered plans and step outputs stay in PostgreSQL (they may
// carry secrets, and histories are kept and shown in the Web UI).

export interface RunWorkflowInput {
  applyId: string;
  incarnation: string;
  operation: string;
  /** An operator's run recorded behind a converge run: it waits for the lock first (db/repos/run-queue.ts). */
  waitsFor?: string;
  /** With `waitsFor`: the run applies this plan, checked again when its turn comes (db/repos/plan-recheck.ts). */
  planId?: string;
}

/** `serial:` as rendered: a host count, or a percentage of the targeted hosts ("25%"). */
export type SerialSpec = number | string | null;

export type RenderOutcome =
  /** `batches`: the hosts per `serial:` batch as the scenario engine cut them (absent in runs
   *  recorded before render stored them: the workflow then cuts `sids` by `serial` itself). */
  /** `budget`: failed (and, with countUnknown, unknown) hosts the run may have and still commit;
   *  absent in runs recorded before the failure budget: none may fail. */
  | {
      ok: true;
      sids: string[];
      serial: SerialSpec;
      batches?: string[][];
      budget?: { maxFailed: number; countUnknown: boolean };
      /** `gate:` between batches (scenario/gate.ts); absent: none (and in runs recorded before gates). */
      gate?: RunGate;
    }
  /** `kid`: the keeper that rendered (the run's error names it, issue 33); absent in runs recorded before. */
  | { ok: false; errorCount: number; kid?: string };

/** A gate as the workflow follows it: the health expression's source (never a value) and the waits. */
export interface RunGate {
  health?: string;
  timeoutMs: number;
  intervalMs: number;
  approval: boolean;
}

/** What a gate check found after one batch: `value` is `false`, a type, or an evaluation error, never
 *  a value read from a host (those may be secret); `sid` the first host where it was not true. */
export interface GateCheck {
  ok: boolean;
  sid?: string;
  value?: string;
}

/** The signal that approves a run waiting at a gate: `{batch}`, the batch it waits after. */
export const APPROVE_SIGNAL = 'keeper.run.approve';
/** The signal that cancels a run waiting at a gate: `{by}`, the operator who cancelled it (its AID). */
export const CANCEL_SIGNAL = 'keeper.run.cancel';

/** What a run waits for between batches (docs/runs.md "Gates between batches"). */
export interface RunWaiting {
  for: 'health' | 'approval';
  /** The batch just finished; the next one starts when the wait ends. */
  batch: number;
  health?: string;
}

export interface RouteGroup {
  kid: string;
  queue: string;
  sids: string[];
}
export interface Routes {
  groups: RouteGroup[];
  unknown: string[];
}

export interface DispatchInput {
  applyId: string;
  sids: string[];
  batch: number;
}

/** What one dispatch activity reports; host-level detail is in run_hosts/run_steps. */
export interface DispatchOutcome {
  ok: number;
  changed: number;
  failed: string[];
  unknown: string[];
  /** Hosts whose stream is not on this keeper (not sent): the workflow re-resolves them. */
  moved: string[];
}

export interface BatchOutcome {
  ok: number;
  changed: number;
  failed: number;
  unknown: number;
}

export interface RunResult {
  applyId: string;
  status: 'succeeded' | 'failed';
  phase: 'wait' | 'render' | 'dispatch' | 'commit';
  hosts: BatchOutcome & { skipped: number };
}

export interface ShardInput {
  applyId: string;
  sids: string[];
  batch: number;
}

/** A plan (docs/plans.md): rendered like a run, every step sent in check mode; applies nothing. */
export interface PlanWorkflowInput {
  planId: string;
  incarnation: string;
  operation: string;
}

export interface PlanResult {
  status: 'ready' | 'failed';
  hosts: Record<string, number>;
}

export interface UpgradeWorkflowInput {
  applyId: string;
  incarnation: string;
  toVersion: number | null;
  /** Recorded behind a converge run (db/repos/run-queue.ts): the upgrade waits for its turn first. */
  waitsFor?: string;
}

export interface RunProgress {
  phase: 'wait' | 'render' | 'dispatch' | 'commit' | 'done';
  batch: number;
  batches: number;
  hosts: BatchOutcome;
  /** Set while the run waits at a gate between batches; `since` in ms since the epoch (workflow time). */
  waiting?: RunWaiting & { since: number };
}
