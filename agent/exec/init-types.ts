// Init systems: "how to start, stop and enable a service on this host". core.service.* (agent/state)
// says what should be true and asks the init system found on the host. Adding one (OpenRC, runit):
// write agent/exec/<tool>.ts exporting an InitPlatform, add one line to agent/exec/init-registry.ts.
import type { CommandRunner } from './runner';

export interface ServiceStatus {
  /** The init system knows the unit (a unit file exists for it). */
  exists: boolean;
  active: boolean;
  /** Started at boot; undefined when the unit cannot be enabled (static, generated). */
  enabled?: boolean;
  /** The unit's file changed on disk since the init system read it. */
  needsReload: boolean;
  /** The main process, when running; for reports and tests (a reload keeps it, a restart does not). */
  mainPid?: number;
}

export interface InitSystem {
  /** Short name used in messages: systemd. */
  readonly tool: string;
  /** Throws ParamError-like errors for a name that is not a unit name; runs nothing. */
  validate(name: string): void;
  status(name: string): Promise<ServiceStatus>;
  start(name: string): Promise<void>;
  stop(name: string): Promise<void>;
  restart(name: string): Promise<void>;
  reload(name: string): Promise<void>;
  enable(name: string, on: boolean): Promise<void>;
  /** Re-reads unit files (systemd: daemon-reload). */
  rereadUnits(): Promise<void>;
  /** Is `path` a place unit files are read from (a change there needs rereadUnits)? */
  isUnitPath(path: string): boolean;
}

/** One supported init system: how to recognise it on the running host and a factory. */
export interface InitPlatform {
  readonly tool: string;
  /** Human description of how it is recognised, for the "no init system" error. */
  readonly detectedBy: string;
  /** Is this the host's running init system? Reads the host (cheap, no command run). */
  running(): boolean;
  create(runner: CommandRunner): InitSystem;
}
