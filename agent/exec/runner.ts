// How the soul runs a host command. Everything goes through this one seam so that:
//  - no command ever reaches a shell: argv arrays only, `shell: false` spelled out, so a package
//    name or path can never be reinterpreted as shell syntax;
//  - tests inject a fake runner and assert the exact argv without touching the host.
import { execFile } from 'node:child_process';

export interface Command {
  /** Executable name (looked up on PATH) or absolute path. */
  file: string;
  args: readonly string[];
  /** Added to the soul's own environment (PATH etc. are kept). */
  env?: Readonly<Record<string, string>>;
  timeoutMs?: number;
  /** Working directory (absolute); default: `/`. */
  cwd?: string;
}

export interface CommandResult {
  /** Exit status; a process killed by a signal reports 128 + signal number, like a shell would. */
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs one command. Resolves with any exit status; rejects only when it could not run at all. */
export type CommandRunner = (cmd: Command) => Promise<CommandResult>;

// Package installs can legitimately take many minutes on a slow mirror.
const DEFAULT_TIMEOUT_MS = 30 * 60_000;
const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;

const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

export function createProcessRunner(defaults: { timeoutMs?: number } = {}): CommandRunner {
  return (cmd) =>
    new Promise((resolve, reject) => {
      execFile(
        cmd.file,
        [...cmd.args],
        {
          shell: false,
          env: { ...process.env, ...cmd.env },
          timeout: cmd.timeoutMs ?? defaults.timeoutMs ?? DEFAULT_TIMEOUT_MS,
          maxBuffer: MAX_OUTPUT_BYTES,
          // Never the soul's own folder (0700, its working directory under systemd): a command that
          // drops privileges (`runuser -u postgres`) could not enter it and would say so.
          cwd: cmd.cwd ?? '/',
          encoding: 'utf8',
          windowsHide: true,
        },
        (err, stdout, stderr) => {
          if (!err) return resolve({ code: 0, stdout, stderr });
          const e = err as NodeJS.ErrnoException & { code?: number | string; signal?: string | null; killed?: boolean };
          if (typeof e.code === 'number') return resolve({ code: e.code, stdout, stderr });
          if (e.signal) {
            const why = e.killed ? ` (timed out or killed)` : '';
            return resolve({
              code: 128 + (SIGNALS[e.signal] ?? 0),
              stdout,
              stderr: stderr + `\n${cmd.file} ended by ${e.signal}${why}`,
            });
          }
          if (e.code === 'ENOENT') return reject(new Error(`${cmd.file}: command not found on this host`));
          reject(new Error(`${cmd.file}: could not run: ${e.message}`));
        },
      );
    });
}

/** Last lines of a command's output, for error messages that stay readable. */
export function tail(text: string, lines = 5): string {
  return text.trim().split('\n').slice(-lines).join('\n');
}
