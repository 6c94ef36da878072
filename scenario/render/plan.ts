/**
 * The render result the keeper dispatches. Plain JSON (it crosses Temporal
 * and gRPC). Step indexes are the task's position in the scenario, the same
 * on every host, so `(apply_id, host, step index)` identifies an effect.
 */

import type { RunGate } from '../gate';
import type { ModuleRuntime } from '../model';

/** Why render left a step out on a host: its `on:`, its `where:`, a render-time `when:`, or a
 *  `loop:` with no items there. */
export type RenderSkip = 'on' | 'where' | 'when' | 'loop';

/** A step made from one item of a task's `loop:` (docs/scenario.md "loop"). */
export interface StepLoop {
  /** The item's position, from 0 (`index` in its expressions and template). */
  index0: number;
  /** Items of the loop on this host; 0 on the one left-out step of an empty loop. */
  length: number;
  /** The item, for apply-time expressions (`item`). Absent on the step of an empty loop. */
  item?: unknown;
}

/**
 * One step for one host: the one shape from render to the database (run_steps.step) to the
 * dispatcher, which sends `module` and `params` as they are. Apply-time expressions stay CEL source.
 */
export interface PlanStep {
  /** The step's position in this host's plan: the task's position when no task has a `loop:`. */
  index: number;
  name: string;
  module: string;
  /** Fully resolved, in the module's wire shape (its contract's `wire` schema): for
   *  core.file.rendered the rendered `content`, without `template` and `vars`. */
  params: Record<string, unknown>;
  /** Apply-time expressions (CEL source), present only when they read registered results or `result`. */
  when?: string;
  changed_when?: string;
  failed_when?: string;
  until?: string;
  /** Extra attempts allowed while `until` is false. */
  retries?: number;
  /** Wait between `until` attempts (the scenario's `delay:` is in seconds). */
  delay_ms?: number;
  register?: string;
  /** `output: safe`: the output is shown even when the step may read a file holding a secret
   *  (runs/activities/host-boundary.ts); it is still scrubbed of the host's secret values. */
  output_safe?: boolean;
  /** Indexes of earlier steps that must have succeeded on this host. */
  require?: number[];
  /** Indexes of earlier steps of which at least one must have changed on this host. */
  onchanges?: number[];
  /** Left out on this host at render: not sent, but reported, and its `register:` name holds a
   *  skipped result (`params` is then empty). */
  skip?: RenderSkip;
  /** The secrets this step's params hold as `«secret:<n>»` handles: entry n names the path and
   *  field, with the keeper's MAC binding it to the run, host and step (scenario/secrets/handles.ts). */
  secrets?: StepSecret[];
  /** Set on the steps of a task with `loop:`, named `<task>[<index0>]`; their `register:` name holds
   *  a list of results, one per item. */
  loop?: StepLoop;
  /** A module shipped with the service (`<service>.<module>.<state>`): its program, which the soul
   *  caches by hash under `paths.modules` (docs/state-modules.md). Absent for `core.*` modules. */
  program?: StepProgram;
}

export interface StepProgram {
  /** sha256 of the program's bytes, hex. */
  sha256: string;
  /** The program's bytes, base64. */
  content: string;
  /** The program answers a dry run; otherwise a dry run reports that it would run, without running it. */
  dry_run: boolean;
  timeout_ms: number;
  /** How the soul starts it (module.yml `runtime:`); absent: the program itself, by its #! line. */
  runtime?: ModuleRuntime;
}

/** One secret of a step: what the dispatching keeper reads, once the MAC verifies. */
export interface StepSecret {
  path: string;
  field: string;
  mac: string;
}

export interface HostPlan {
  sid: string;
  /** The soulprint as rendered, for `soulprint.self` in apply-time expressions. */
  soulprint: Record<string, unknown>;
  /** Every step of the scenario in order; those left out on this host carry `skip`. */
  steps: PlanStep[];
  /** What render read of this host's facts (scenario/render/reads.ts): the top-level facts, or
   *  `*` when it listed them all. A plan applies on a host only while these are unchanged. */
  reads: { facts: string[] };
  /** This host's input as resolved (defaults filled in) when per-host input applied to it; absent: the plan's `input`. */
  input?: Record<string, unknown>;
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
    /** `max_failed:` resolved against the targeted hosts (scenario/budget.ts). */
    budget: { maxFailed: number; countUnknown: boolean };
    /** `gate:` between batches (scenario/gate.ts); absent: batches follow each other at once. */
    gate?: RunGate;
  };
  hosts: HostPlan[];
}

export interface RenderHost {
  sid: string;
  soulprint: Record<string, unknown>;
  /** This host's per-host input layer (scenario/host-input.ts hostLayer), merged over the run's input. */
  input?: Record<string, unknown>;
}
