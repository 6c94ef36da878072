// What every command that starts a run does after the keeper's 202: follow the run to its end
// (unless --no-follow), print the outcome, and exit 1 when it failed. Shared by run, create, unlock,
// upgrade, apply-plan and delete so they all tell the same story in the same words.
import type { Argv } from 'yargs';
import type { Ctx } from '../context';
import { CliError, ExitCode } from '../errors';
import { changedWhenLines, failureLines, followRun, type RunReport } from '../follow';

export const followOptions = (c: Argv) =>
  c
    .option('follow', {
      type: 'boolean',
      default: true,
      describe: 'follow the run until it ends (--no-follow returns at once)',
    })
    .option('input', {
      type: 'string',
      array: true,
      describe: 'input value key=value (repeatable; YAML scalars; dotted keys nest)',
    })
    .option('input-file', {
      type: 'string',
      describe: 'YAML/JSON file with the input mapping (--input values go on top)',
    });

/** The line printed when a run succeeds; a destroy run leaves no incarnation to call ready. */
export type SuccessLine = (report: RunReport) => string;
const readyLine: SuccessLine = (r) => `run ${r.apply_id} succeeded: ${r.incarnation} is ready\n`;

/** After a 202: follow the run (unless --no-follow), print its failures, exit 1 when it failed. */
export async function afterAccepted(
  ctx: Ctx,
  name: string,
  accepted: any,
  follow: boolean,
  success: SuccessLine = readyLine,
): Promise<void> {
  // Behind the keeper's converge run (new hosts), the run was accepted to start after it (docs/runs.md).
  if (accepted.waits_for)
    ctx.note(
      `run ${accepted.apply_id} waits for converge run ${accepted.waits_for} (new hosts of ${name}); it starts when that run ends`,
    );
  if (!follow) {
    ctx.show(
      accepted,
      () =>
        `accepted: run ${accepted.apply_id} of ${name} (${accepted.operation}); follow it with: keeperctl incarnations run-report ${name} ${accepted.apply_id}\n`,
    );
    return;
  }
  const tty = Boolean(process.stderr.isTTY) && ctx.format === 'table';
  const report = await followRun(ctx, name, accepted.apply_id, { tty, quiet: ctx.format !== 'table' });
  finish(ctx, report, success);
}

export function finish(ctx: Ctx, report: RunReport, success: SuccessLine = readyLine): void {
  ctx.show(report, () => {
    const flagged = changedWhenLines(report).map((l) => `  ${l}\n`);
    const overrides = flagged.length > 0 ? `changed_when overrode the module's answer:\n${flagged.join('')}` : '';
    if (report.status === 'succeeded') return success(report) + overrides;
    return (
      [
        `run ${report.apply_id} failed; ${report.incarnation} is error_locked. Failures:`,
        ...failureLines(report).map((l) => `  ${l}`),
        ...nextStep(report),
        '',
      ].join('\n') + overrides
    );
  });
  if (report.status === 'failed')
    throw new CliError(ExitCode.Failed, `run ${report.apply_id} of ${report.incarnation} failed (error_locked)`);
}

/** After a plan that found drift, the way on is a new plan (a plain retry would apply an unreviewed render, and the keeper refuses it). */
function nextStep(report: RunReport): string[] {
  const name = report.incarnation;
  if (!report.hosts.some((h) => h.reason?.startsWith('drift since plan ')))
    return [`fix the cause, then: keeperctl incarnations unlock ${name} --retry`];
  return [
    'hosts changed since the plan: review a new plan before applying anything:',
    `  keeperctl incarnations unlock ${name} && keeperctl run ${name} ${report.operation} --plan`,
    `(or overwrite those changes unreviewed: keeperctl incarnations unlock ${name} --retry --force-render)`,
  ];
}
