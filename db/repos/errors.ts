// Errors the repositories raise for outcomes a caller must tell apart (the API maps them to 404/409).
// Anything else (a lost connection, a bug) stays a plain error.

export type ConflictKind = 'duplicate' | 'active-token' | 'onboarded' | 'ssh-transport' | 'last-admin' | 'in-use';

export class RepoConflict extends Error {
  constructor(
    readonly kind: ConflictKind,
    message: string,
  ) {
    super(message);
    this.name = 'RepoConflict';
  }
}

export class RepoNotFound extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RepoNotFound';
  }
}

/** PostgreSQL's unique_violation, raised by a primary key or unique index. */
export function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23505';
}
