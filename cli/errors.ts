// Exit codes by class of failure (documented in docs/cli.md), so scripts can branch on them.
export enum ExitCode {
  Ok = 0,
  /** The command worked, but what it drove failed: a run that ended error_locked. */
  Failed = 1,
  /** Bad command line or input the API refused (400, 413, 415, 422). */
  Usage = 2,
  /** No token, token refused (401), or permission missing (403). */
  Auth = 3,
  /** The resource does not exist (404). */
  NotFound = 4,
  /** Conflict with the current state (409): already exists, locked, token still active. */
  Conflict = 5,
  /** The keeper or a dependency failed or is unreachable (5xx, 429, network, TLS). */
  Server = 6,
}

export function exitCodeForStatus(status: number): ExitCode {
  if (status === 401 || status === 403) return ExitCode.Auth;
  if (status === 404) return ExitCode.NotFound;
  if (status === 409) return ExitCode.Conflict;
  if (status >= 400 && status < 500 && status !== 429) return ExitCode.Usage;
  return ExitCode.Server;
}

/** An error the CLI prints as `keeperctl: <message>` plus `  fix: <hint>`, exiting with `code`. */
export class CliError extends Error {
  constructor(
    readonly code: ExitCode,
    message: string,
    readonly hint?: string,
    readonly problem?: unknown,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
