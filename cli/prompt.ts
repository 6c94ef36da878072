// Asking before something that changes hosts. A terminal gets a question; anything else must say
// --yes, so a script never blocks on a prompt nobody sees and never proceeds by accident.
import readline from 'node:readline';
import type { Ctx } from './context';
import { CliError, ExitCode } from './errors';

export async function confirm(ctx: Ctx, yes: boolean, question: string): Promise<void> {
  if (yes) return;
  if (!process.stdin.isTTY) {
    throw new CliError(
      ExitCode.Usage,
      `${question} (not asked: standard input is not a terminal)`,
      'pass --yes to proceed without asking',
    );
  }
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
  const answer = await new Promise<string>((resolve) => rl.question(`${question} [y/N] `, resolve));
  rl.close();
  if (!/^y(es)?$/i.test(answer.trim())) throw new CliError(ExitCode.Failed, 'cancelled; nothing was changed');
  void ctx;
}
