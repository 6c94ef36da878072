/**
 * The render result the keeper dispatches. Plain JSON (it crosses Temporal
 * and gRPC). Step indexes are the task's position in the scenario, the same
 * on every host, so `(apply_id, host, step index)` identifies an effect.
 */
export interface PlanStep {
  index: number;
  name: string;
  module: string;
  /** Fully resolved. For core.file.rendered, `content` holds the rendered file. */
  params: Record<string, unknown>;
  /** Apply-time expressions (CEL source), present only when they read registered results or `result`. */
  when?: string;
  changed_when?: string;
  failed_when?: string;
  until?: string;
  retries?: number;
  delay?: number;
  register?: string;
  /** Indexes of earlier steps that must have succeeded on this host. */
  require?: number[];
  /** Indexes of earlier steps of which at least one must have changed on this host. */
  onchanges?: number[];
}

export interface HostPlan {
  sid: string;
  /** The soulprint as rendered, for `soulprint.self` in apply-time expressions. */
  soulprint: Record<string, unknown>;
  steps: PlanStep[];
  /** Steps left out on this host, with the reason (on/where/when evaluated at render). */
  skipped: Array<{ index: number; reason: string }>;
}

export interface RenderPlan {
  service: string;
  operation: string;
  input: Record<string, unknown>;
  /** Apply-time expressions also see these as `input` and `state`. */
  state: Record<string, unknown>;
  /** `state_changes.sets`, evaluated at render, to commit if the run succeeds. */
  stateChanges: { sets: Array<{ key: string; value: unknown }> };
  /** The state after applying `stateChanges` to `state`. */
  nextState: Record<string, unknown>;
  orchestration: {
    /** Batch size from `serial:` (null: all hosts at once). */
    serial: number | null;
    /** SIDs per batch, in order. */
    batches: string[][];
    /** Hosts excluded by the scenario's `on:`/`where:`. */
    excluded: Array<{ sid: string; reason: string }>;
  };
  hosts: HostPlan[];
}

export interface RenderHost {
  sid: string;
  soulprint: Record<string, unknown>;
}
