// The contract between the step applier and the state modules ("what should be true").
import type { InstalledPackages } from '../exec/dpkg-status';
import type { InitSystem } from '../exec/init-types';
import type { CommandRunner } from '../exec/runner';
import type { HostFacts } from '../exec/types';

export type { HostFacts } from '../exec/types';
export type { CommandRunner } from '../exec/runner';

/** JSON-serialisable description of what changed (or would change); never holds file contents. */
export type StepDiff = Record<string, unknown>;

/** What every state module returns, and what the ledger records for a step. */
export interface ModuleResult {
  /** The system was changed (or, in a dry run, would be). */
  changed: boolean;
  /** The desired state holds (or, in a dry run, the check itself succeeded). */
  ok: boolean;
  /** One or a few human-readable lines: what was done, or why it failed. */
  output: string;
  diff?: StepDiff;
  /** The files the step read and wrote, by identity only (content-identity.ts): for the keeper's secret taint. */
  files?: FileIdentity[];
}

/**
 * A file a step read (its content before the step) or wrote (after it), without its content: a
 * keyed digest of the bytes (a copy has the same) and the inode (a hard link has the same).
 */
export interface FileIdentity {
  path: string;
  role: 'read' | 'written';
  /** HMAC-SHA256 (hex) of the content under the soul's own content key. */
  digest: string;
  /** "<device>:<inode>:<birth time ns>". */
  file_id: string;
}

export interface StateContext {
  /** Read and compare only; report what would change and change nothing. */
  dryRun: boolean;
  /** In a dry run: the keeper allows a unified diff of a file's content (the step holds no secret). */
  showContent?: boolean;
  /** The steps of the same apply (run or plan) this soul ran before this one, in order
   *  (agent/apply/run-memory.ts): core.service.* reloads unit files an earlier step changed. */
  earlier?: readonly EarlierStep[];
  /** In a dry run: what this step's answer takes on trust from an earlier step of the plan (a user or
   *  unit a package it would install brings), one phrase each (agent/state/pending.ts). */
  decided?: string[];
  /** Secret values the keeper named for this step: a module never puts them where other processes
   *  can read them (a shipped module's environment, agent/modules/runner.ts). */
  secrets?: readonly string[];
}

/** A step this soul ran earlier in the same apply: what it named and whether it changed (or would). */
export interface EarlierStep {
  index: number;
  module: string;
  changed: boolean;
  /** The paths its params name (`path`), for the modules that write files. */
  paths: string[];
  /** The names its params name (`name`: a user, a group, packages). */
  names: string[];
}

export interface StateModule {
  readonly name: string;
  /** Never throws: every failure, including invalid params, is an `ok: false` result. */
  run(params: unknown, ctx: StateContext): Promise<ModuleResult>;
}

/** Where the system-account databases live; injectable so tests never read the host's /etc. */
export interface AccountFiles {
  passwd: string;
  group: string;
}

/** What state modules may use from the host. Everything that touches the OS is injectable. */
export interface StateDeps {
  facts: HostFacts;
  runner: CommandRunner;
  /** The Debian package database read in-process (agent/exec/dpkg-status.ts); absent: dpkg-query. */
  installed?: InstalledPackages;
  accounts?: AccountFiles;
  /** The init system; absent: the one running on this host (agent/exec/init-registry.ts). */
  init?: InitSystem;
  /** The soul's own folders (config paths.seed, paths.modules): never removed by core.*.absent. */
  soulPaths?: readonly string[];
  /** The soul's content key (content-identity.ts); absent: file modules report no file identities. */
  contentKey?: Buffer;
}

export type StateModuleFactory = (deps: StateDeps) => StateModule;
