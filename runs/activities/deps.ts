// Everything the run activities touch, passed in once by the worker (runs/worker.ts). Tests
// build the same object with the real database and Temporal, and only swap what is not real yet.
import type { Knex } from 'knex';
import type { Logger } from '../../common/logger';
import type { ScenarioPort } from './scenario-port';
import type { DispatchSecrets } from './secrets';
import type { PlanApplier } from '../start/plan-applier';
import type { PushTransport, StepSender } from './step-sender';
import type { InflightLog } from './inflight';

export type { PushTransport, StepSender } from './step-sender';

/** Which keeper holds each soul's stream right now (the presence lease), null when none does. */
export type LocateSouls = (sids: string[]) => Promise<(string | null)[]>;

export interface SharedActivityDeps {
  db: Knex;
  log: Logger;
  /** This keeper: its errors name it (keeper-errors.ts), as render's do; absent in tests of one keeper. */
  kid?: string;
  scenario: ScenarioPort;
  locate: LocateSouls;
  /** The shared task queue; a keeper's dispatch queue is derived from it (runs/queues.ts). */
  taskQueue: string;
  /** Where services are checked out (config.services.cache_dir). */
  cacheDir: string;
  /** Secret handles in plans (issues 12, 28): the keeper's key (handle keys are derived from it) and secretstore.scenario_prefix. */
  secrets?: RenderSecretsConfig;
  /** config plans.ttl: how long a drift check's plan can be applied (default 1 h). */
  planTtlMs?: number;
  /** config retention: how long plans, runs and activity rows are kept (runs/activities/retention.ts). */
  retention?: { plansMs: number; runsMs: number; activityMs: number };
  /** Removes a destroyed incarnation's secret inputs from the store (secrets/incarnation-inputs.ts). */
  purgeSecretInputs?: (inc: { name: string; secrets_key: string | null }) => Promise<void>;
  /** The run service (runs/start/service.ts): drift repair applies its plan through it, as an operator would. */
  runs?: PlanApplier;
}

export interface RenderSecretsConfig {
  nonceKey: Uint8Array;
  scenarioPrefix: string;
}

export interface DispatchActivityDeps {
  db: Knex;
  log: Logger;
  scenario: Pick<ScenarioPort, 'evaluate'>;
  sessions: StepSender;
  locate: LocateSouls;
  kid: string;
  /** Per step, how long a soul may stay silent before the host is `unknown`. */
  stepTimeoutMs?: number;
  /** How long to wait for a soul to (re)connect to this keeper before handing it back as moved. */
  reconnectGraceMs?: number;
  /** Reads the secrets a plan's verified handles name, at send time (runs/activities/secrets.ts). */
  secrets?: DispatchSecrets;
  /** Hosts registered with transport ssh; absent: this keeper reaches only agents. */
  push?: PushTransport;
  /** Lists the running dispatch activities in the cache for the failover watch (inflight.ts); absent: not listed. */
  inflight?: InflightLog;
}
