// Package names and versions come from a service repository, i.e. from outside this host. They are
// checked here, before any command is built, so that a name can never become an option
// (`--config=x`), a path, or shell syntax. Every platform passes its own (stricter) pattern too.

/** The platform-specific grammar of a package name and of a version string. */
export interface NameRules {
  tool: string;
  name: RegExp;
  version: RegExp;
}

const MAX_LENGTH = 200;
// Characters that mean something to a shell or to a path. We never use a shell, but a name holding
// them is certainly not a package and most likely an attack, so the message names the reason.
const SHELL_META = /[;&|`$<>(){}[\]\\'"*?!#~^]/;

export class InvalidPackageError extends Error {
  override readonly name = 'InvalidPackageError';
}

function checkCommon(kind: 'package name' | 'version', value: unknown): string {
  if (typeof value !== 'string' || value === '') throw new InvalidPackageError(`${kind} must be a non-empty string`);
  const shown = JSON.stringify(value);
  if (value.length > MAX_LENGTH)
    throw new InvalidPackageError(`${kind} ${shown.slice(0, 40)}... is longer than ${MAX_LENGTH} characters`);
  if (value.startsWith('-'))
    throw new InvalidPackageError(`${kind} ${shown} starts with "-" and would be read as an option; refused`);
  if (/[\s\0]/.test(value))
    throw new InvalidPackageError(`${kind} ${shown} contains whitespace or control characters; refused`);
  if (value.includes('/')) throw new InvalidPackageError(`${kind} ${shown} contains a path separator; refused`);
  return shown;
}

/** Throws an InvalidPackageError naming the rule broken; returns nothing when the name is safe. */
export function assertPackageName(name: unknown, rules: NameRules): asserts name is string {
  const shown = checkCommon('package name', name);
  if (SHELL_META.test(name as string))
    throw new InvalidPackageError(`package name ${shown} contains shell metacharacters; refused`);
  if (!rules.name.test(name as string)) {
    throw new InvalidPackageError(
      `package name ${shown} is not a valid ${rules.tool} package name (must match ${rules.name.source})`,
    );
  }
}

export function assertPackageVersion(version: unknown, rules: NameRules): asserts version is string {
  const shown = checkCommon('version', version);
  if (!rules.version.test(version as string)) {
    throw new InvalidPackageError(
      `version ${shown} is not a valid ${rules.tool} version (must match ${rules.version.source})`,
    );
  }
}

export function assertPackageRequest(name: unknown, version: unknown, rules: NameRules): void {
  assertPackageName(name, rules);
  if (version !== undefined) assertPackageVersion(version, rules);
}
