// The wait between two `serial:` batches (docs/runs.md "Gates between batches"). After a batch within
// the failure budget, a run whose scenario declares `gate:` first re-runs its health check every
// `interval` until it is true on every host the batch applied to or `timeout` has passed, then waits
// for an operator's approval: the `keeper.run.approve` signal, sent by POST .../approve. Both waits
// are durable timers and conditions in the workflow, so a keeper or worker restart loses nothing:
// the next worker replays the history and waits on. Either wait ends at once on the
// `keeper.run.cancel` signal (POST .../cancel): the run stops there. What the run waits for is
// recorded on the run (setWaiting) for the API, its SSE stream and the /ui. Deterministic: no I/O
// here, only activities.
import { condition, defineSignal } from '@temporalio/workflow';
import type { SharedActivities } from '../activities/shared';
import { APPROVE_SIGNAL, CANCEL_SIGNAL, type GateCheck, type RunGate, type RunProgress } from '../messages';

/** An operator's approval of the wait after `batch` (a stale one, for an earlier batch, approves nothing). */
export const approveSignal = defineSignal<[{ batch: number }]>(APPROVE_SIGNAL);
/** An operator's cancel of a waiting run; `by` names them in the run's error. */
export const cancelSignal = defineSignal<[{ by: string }]>(CANCEL_SIGNAL);

export interface GateWait {
  applyId: string;
  gate: RunGate;
  /** The batch just finished (1-based) and its hosts. */
  batch: number;
  sids: string[];
  progress: RunProgress;
  /** The highest batch an operator approved so far. */
  approved: () => number;
  /** The operator who cancelled the run, once one did. */
  cancelledBy: () => string | null;
}

/** Why a cancelled run stops: it starts "cancelled by <AID>" (docs/runs.md "Cancelling a waiting run"). */
export function cancelReason(by: string, what: string, batch: number): string {
  return `cancelled by ${by} while waiting for ${what} after batch ${batch}`;
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

/** Waits at the gate after a batch; answers null to go on, or why the run stops. */
export async function waitAtGate(acts: SharedActivities, w: GateWait): Promise<string | null> {
  const { applyId, gate, batch } = w;
  if (gate.health) {
    const health = gate.health;
    w.progress.waiting = { for: 'health', batch, health, since: Date.now() };
    await acts.setWaiting({ applyId, waiting: { for: 'health', batch, health } });
    const start = Date.now();
    let last: GateCheck;
    for (;;) {
      if (w.cancelledBy() !== null) return cancelReason(w.cancelledBy()!, 'its health check', batch);
      last = await acts.checkGate({ applyId, sids: w.sids, health });
      if (last.ok) break;
      const left = gate.timeoutMs - (Date.now() - start);
      if (left <= 0) {
        return (
          `the health check \`${health}\` after batch ${batch} was still ${last.value ?? 'false'}` +
          `${last.sid ? ` on host ${last.sid}` : ''} after ${seconds(gate.timeoutMs)}`
        );
      }
      // A timer like sleep's (replay of older histories unchanged), cut short by a cancel.
      await condition(() => w.cancelledBy() !== null, Math.min(gate.intervalMs, left));
    }
  }
  if (gate.approval) {
    w.progress.waiting = { for: 'approval', batch, since: Date.now() };
    await acts.setWaiting({ applyId, waiting: { for: 'approval', batch } });
    await condition(() => w.approved() >= batch || w.cancelledBy() !== null);
    if (w.approved() < batch) return cancelReason(w.cancelledBy()!, 'approval', batch);
  }
  delete w.progress.waiting;
  await acts.setWaiting({ applyId, waiting: null });
  return null;
}
