// What this soul ran earlier in the same apply, so a step can act on what an earlier one changed
// (core.service.* re-reads unit files a file step of the same run or plan changed). The keeper
// decides `onchanges:` itself; this is the soul's own view, kept in memory for dry runs as for
// real ones: a plan's dry-run steps are never in the ledger, and the plan must predict the apply.
// After a restart the memory is empty; systemd's own NeedDaemonReload still covers a real run.
import type { EarlierStep } from '../state/types';
import { UNIT_FILE_DIR } from '../state/systemd-unit';

/** Applies remembered at once: a soul runs few applies side by side; the oldest is forgotten first. */
const KEEP_APPLIES = 64;

/** An `until:` re-send is `<apply_id>:u<n>` (runs/activities/apply-host.ts): the same apply. */
const applyOf = (applyId: string) => applyId.replace(/:u[0-9]+$/, '');

export class RunMemory {
  private readonly applies = new Map<string, Map<number, EarlierStep>>();

  earlier(applyId: string, index: number): EarlierStep[] {
    const steps = this.applies.get(applyOf(applyId));
    return steps ? [...steps.values()].filter((s) => s.index < index).sort((a, b) => a.index - b.index) : [];
  }

  remember(applyId: string, step: EarlierStep): void {
    const key = applyOf(applyId);
    let steps = this.applies.get(key);
    if (!steps) {
      steps = new Map();
      this.applies.set(key, steps);
      if (this.applies.size > KEEP_APPLIES) this.applies.delete(this.applies.keys().next().value!);
    }
    steps.set(step.index, step);
  }
}

/** The paths a step's params name, for the modules that write them (core.systemd.unit writes its
 *  unit's file, so a core.service.* step after it in a plan knows the unit will exist). */
export function pathsOf(params: unknown, module?: string): string[] {
  const p = (params ?? {}) as Record<string, unknown>;
  if (module === 'core.systemd.unit')
    return typeof p.name === 'string' && typeof p.content === 'string' ? [`${UNIT_FILE_DIR}/${p.name}`] : [];
  return typeof p.path === 'string' ? [p.path] : [];
}

/** The names a step's params name (`name`, one or a list). */
export function namesOf(params: unknown): string[] {
  const n = ((params ?? {}) as Record<string, unknown>).name;
  if (typeof n === 'string') return [n];
  return Array.isArray(n) ? n.filter((x): x is string => typeof x === 'string') : [];
}
