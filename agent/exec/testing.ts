// A scripted CommandRunner for tests: records every command and answers from a script, so tests
// assert the exact argv without running anything on the host.
import type { Command, CommandResult, CommandRunner } from './runner';

export type Answer = Partial<CommandResult> | ((cmd: Command) => Partial<CommandResult>);

export interface FakeRunner {
  run: CommandRunner;
  /** Every command run so far, in order. */
  calls: Command[];
  /** The argv of each call as one array: [file, ...args]. */
  argv(): string[][];
}

/** Answers each call with the next scripted answer (the last one repeats); default exit 0, no output. */
export function createFakeRunner(...answers: Answer[]): FakeRunner {
  const calls: Command[] = [];
  return {
    calls,
    argv: () => calls.map((c) => [c.file, ...c.args]),
    run: async (cmd) => {
      calls.push(cmd);
      const answer = answers[Math.min(calls.length - 1, answers.length - 1)] ?? {};
      const r = typeof answer === 'function' ? answer(cmd) : answer;
      return { code: r.code ?? 0, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
    },
  };
}
