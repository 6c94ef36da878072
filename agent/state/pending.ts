// In a plan (a dry run), what an earlier step of the same plan would install is not on the host yet:
// the users, groups, units and files a package brings cannot be read before it is there, and which
// ones it brings cannot be known before it is downloaded. A later step that depends on them says so
// ("decided at apply: after step 0 installs postgresql-15") instead of failing, and the keeper shows
// that in the plan (docs/plans.md "What a plan cannot know"). A real run never takes this path: the
// package is installed by then.
import type { EarlierStep, StateContext } from './types';

const PKG_INSTALL = 'core.pkg.installed';

/** The last earlier step of this plan that would install packages, or undefined (or not a dry run). */
export function pendingInstall(ctx: Pick<StateContext, 'dryRun' | 'earlier'>): EarlierStep | undefined {
  if (!ctx.dryRun) return undefined;
  return [...(ctx.earlier ?? [])].reverse().find((e) => e.module === PKG_INSTALL && e.changed);
}

/** "after step 0 installs postgresql-15" */
export function afterInstall(step: EarlierStep): string {
  return `after step ${step.index} installs ${step.names.join(', ') || 'its packages'}`;
}

/** Notes what is decided at apply for this step (a dry run collects them; see apply-step.ts). */
export function decideAtApply(ctx: Pick<StateContext, 'decided'>, note: string): void {
  if (ctx.decided && !ctx.decided.includes(note)) ctx.decided.push(note);
}
