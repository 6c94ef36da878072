// The one shape every state follows (after Salt's states): parse the params, read the current
// state, compute the difference, stop there in a dry run, otherwise apply, then report.
// Keeping it in one place means no module can forget the dry-run check or leak an exception.
import type { FileIdentity, StateContext, StateModule, StepDiff, ModuleResult } from './types';

export interface Change {
  /** What applying will do, as a phrase completing "would ...": "install nginx with apt". */
  summary: string;
  diff?: StepDiff;
}

export interface StateSpec<P, Current> {
  name: string;
  /** Validates and normalises params; throws with a message meant for the operator. */
  parse(params: unknown): P;
  read(params: P, ctx: StateContext): Promise<Current>;
  /** null when the system is already as desired; `ctx` says whether content may be shown. */
  diff(params: P, current: Current, ctx: StateContext): Change | null;
  /** Says what already holds, for the unchanged report ("nginx 1.22 is installed"). */
  describe(params: P, current: Current): string;
  /** Makes the change; resolves with what was done, in the past tense, for the report. */
  apply(params: P, current: Current, change: Change): Promise<string>;
  /**
   * The files the step read and (when `applied`) wrote, by identity (content-identity.ts), for the
   * keeper's secret taint. Best effort: a failure leaves them out and never fails the step.
   */
  files?(params: P, current: Current, applied: boolean): Promise<FileIdentity[]>;
}

export function defineState<P, Current>(spec: StateSpec<P, Current>): StateModule {
  return {
    name: spec.name,
    async run(raw: unknown, ctx: StateContext): Promise<ModuleResult> {
      let phase = 'invalid params';
      try {
        const params = spec.parse(raw);
        phase = 'reading current state failed';
        const current = await spec.read(params, ctx);
        const withFiles = async (r: ModuleResult, applied: boolean): Promise<ModuleResult> => {
          const files = await spec.files?.(params, current, applied).catch(() => []);
          return files?.length ? { ...r, files } : r;
        };
        const change = spec.diff(params, current, ctx);
        if (change === null)
          return withFiles({ changed: false, ok: true, output: spec.describe(params, current) }, false);
        const withDiff = change.diff === undefined ? {} : { diff: change.diff };
        if (ctx.dryRun)
          return withFiles(
            { changed: true, ok: true, output: `would ${change.summary} (dry run)`, ...withDiff },
            false,
          );
        phase = 'apply failed';
        const output = await spec.apply(params, current, change);
        return withFiles({ changed: true, ok: true, output, ...withDiff }, true);
      } catch (err) {
        // A failed apply may have changed part of the system; `changed: false` only means we do not
        // claim a change, the output says what failed.
        return { changed: false, ok: false, output: `${spec.name}: ${phase}: ${errorMessage(err)}` };
      }
    },
  };
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
