/**
 * Steps are idempotent by the spec: applying a scenario twice changes nothing the second time. A
 * state module knows whether the host already is as asked; `core.cmd.run` does not, so without a
 * guard it runs, and reports a change, on every run (SL033, a warning: the command may be harmless
 * to repeat, which only the author knows). The guards: `creates`, `removes`, `unless`, `onlyif`
 * (the module's own), `onchanges` and `when` (the task's). A plan of such a step says "runs every
 * time (no guard)" rather than a change it cannot know (agent/state/cmd-run.ts).
 */
import { makeError, type RenderError } from '../errors';
import type { LoadedService, Task } from '../model';
import { pair } from '../yaml/node';

export const RULE_UNGUARDED_COMMAND = 'SL033';
const GUARD_PARAMS = ['creates', 'removes', 'unless', 'onlyif'] as const;

/** True when the task is a `core.cmd.run` with none of the guards. */
export function isUnguardedCommand(t: Task): boolean {
  if (t.module !== 'core.cmd.run') return false;
  if (t.onchanges.length > 0 || t.when) return false;
  // `params: "${...}"` as a whole: known only at render, not judged here.
  if (t.params && t.params.kind !== 'map') return false;
  return !GUARD_PARAMS.some((g) => pair(t.params, g) !== undefined);
}

/** The warnings of every scenario's unguarded `core.cmd.run`, at the task's `module:`. */
export function unguardedCommands(service: LoadedService): RenderError[] {
  const out: RenderError[] = [];
  for (const scenario of service.scenarios.values())
    for (const t of scenario.tasks)
      if (isUnguardedCommand(t))
        out.push(
          makeError(
            t.modulePos,
            RULE_UNGUARDED_COMMAND,
            `task "${t.name}": core.cmd.run has no guard, so it runs (and reports a change) on every run; steps should be idempotent`,
            'add `creates: <a path the command makes>`, `removes: <a path it deletes>`, `unless: [<a check that exits 0 when done>]` or `onlyif: [...]`, or run it only on a change (`onchanges: [<task>]`) or a condition (`when:`)',
          ),
        );
  return out;
}
