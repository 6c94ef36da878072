// Gates between `serial:` batches (docs/runs.md "Gates between batches"): after each batch but the
// last, the run may wait until a CEL health check is true on every host the batch applied to
// (re-evaluated every `interval:` until `timeout:`), then for an operator's approval. Pure: render,
// the scenario check and soul-lint share it; the workflow gets the resolved gate in milliseconds.
import { parseDuration } from '../common/duration';
import type { ScenarioGate } from './model';

/** The gate as a run carries it (only the expression's source, never a value, travels). */
export interface RunGate {
  health?: string;
  timeoutMs: number;
  intervalMs: number;
  approval: boolean;
}

export const GATE_DEFAULT_TIMEOUT_MS = 60_000;
export const GATE_DEFAULT_INTERVAL_MS = 2_000;
/** Bounds: a check at most every 100 ms (each one reads the batch's results and facts) and a
 *  health wait of at most a day (an approval has no timeout: it waits in Temporal). */
export const GATE_MIN_INTERVAL_MS = 100;
export const GATE_MAX_TIMEOUT_MS = 24 * 3_600_000;

/** What is wrong with a `timeout:`/`interval:` value, or null. */
export function gateDurationProblem(key: 'timeout' | 'interval', text: string): string | null {
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch (e) {
    return (e as Error).message;
  }
  if (key === 'interval' && ms < GATE_MIN_INTERVAL_MS) return `must be at least ${GATE_MIN_INTERVAL_MS}ms`;
  if (key === 'timeout' && (ms < 1 || ms > GATE_MAX_TIMEOUT_MS)) return 'must be more than 0 and at most 24h';
  return null;
}

/** The run's gate, or undefined when the scenario has none (or a value the check refuses). */
export function resolveGate(gate: ScenarioGate | undefined): RunGate | undefined {
  if (!gate || (!gate.health && !gate.approval)) return undefined;
  const ms = (key: 'timeout' | 'interval', fallback: number) => {
    const v = gate[key]?.value;
    return v === undefined || gateDurationProblem(key, v) ? fallback : parseDuration(v);
  };
  return {
    ...(gate.health ? { health: gate.health.src } : {}),
    timeoutMs: ms('timeout', GATE_DEFAULT_TIMEOUT_MS),
    intervalMs: ms('interval', GATE_DEFAULT_INTERVAL_MS),
    approval: gate.approval,
  };
}
