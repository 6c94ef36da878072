// Execution modules: "how to do it on this OS". A state module (agent/state) says what should be
// true and asks the package manager chosen for this host's facts to read or change the system.
import type { InstalledPackages } from './dpkg-status';
import type { CommandRunner } from './runner';

/**
 * The host facts the registry selects by; the full facts document has more. The family is read
 * from `os.family` or, as the soul's soulprint reports it, from the flat `os_family`.
 */
export interface HostFacts {
  os?: { family?: string; [key: string]: unknown };
  os_family?: string;
  [key: string]: unknown;
}

export function osFamilyOf(facts: HostFacts): string | undefined {
  return facts.os?.family ?? facts.os_family;
}

export interface PackageState {
  /** Installed, and at the wanted version when one was asked for. */
  satisfied: boolean;
  /** Installed at all (maybe at another version). */
  installed: boolean;
  /** The installed version when the tool reports it. */
  version?: string;
  /** Not satisfied and no version asked for: the version the tool would install (a plan shows it). */
  candidate?: string;
}

export interface PackageManager {
  /** Short tool name used in messages: apt, dnf, apk. */
  readonly tool: string;
  /** Throws InvalidPackageError; runs nothing. Called before read/install (which call it too). */
  validate(name: string, version?: string): void;
  read(name: string, version?: string): Promise<PackageState>;
  /** Installs (or moves to `version`); resolves with a one-line summary, throws with the tool's error. */
  install(name: string, version?: string): Promise<string>;
  /** Installs several packages in one tool call (validated first); a one-line summary. */
  installAll(requests: readonly PackageRequest[]): Promise<string>;
  /** Removes packages in one tool call; `purge` also removes their configuration where the tool can. */
  remove(names: readonly string[], purge: boolean): Promise<string>;
}

export interface PackageRequest {
  name: string;
  version?: string;
}

/** One supported platform: a predicate over facts and a factory. Adding a platform = one of these. */
export interface PackagePlatform {
  readonly tool: string;
  /** Human description of when it applies, for the "no platform" error. */
  readonly appliesTo: string;
  matches(facts: HostFacts): boolean;
  /** `installed`: the Debian database read in-process (dpkg-status.ts); absent: the tool is asked. */
  create(runner: CommandRunner, installed?: InstalledPackages): PackageManager;
}
