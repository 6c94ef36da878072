// What the keeper process adds for incarnation runs: the Temporal client, the run service every
// starter calls (runs/start/service.ts) and the two workers (runs/worker.ts). Listed after the hub's components, so at shutdown
// the workers stop before the soul sessions they dispatch through.
import { purgeSecretInputs } from '../secrets/incarnation-inputs';
import { presenceLocator, transportLocator } from './activities/presence-lookup';
import type { PushTransport, StepSender } from './activities/deps';
import { defaultScenarioPort } from './activities/scenario-adapter';
import type { ScenarioPort } from './activities/scenario-port';
import type { Component } from '../platform/component';
import type { RuntimeWithCache } from '../platform/runtime';
import { withGitSources } from './git-access';
import { retentionScheduleComponent } from './retention-schedule';
import { createTemporalClientHolder, temporalClientComponent, type TemporalClientHolder } from './connection';
import { createRunService, type RunService } from './start/service';
import { temporalWorkersComponent } from './worker';
import { cacheInflightLog } from './activities/inflight';
import { failoverComponent, type FailoverDeps } from './failover';

export interface RunComponentsOptions {
  runtime: RuntimeWithCache;
  /** The hub's sessions: dispatch sends through them, the failover watch hears of souls that moved here. */
  sessions: StepSender & FailoverDeps['sessions'];
  /** Hosts registered with transport ssh (hub/ssh); absent: only agents are reached. */
  push?: PushTransport;
  /** Replaces the scenario engine (tests); default: scenario/ through runs/activities/scenario-adapter.ts. */
  scenario?: ScenarioPort;
}

export function createRunComponents(opts: RunComponentsOptions): {
  temporal: TemporalClientHolder;
  scenario: ScenarioPort;
  service: RunService;
  components: Component[];
} {
  const { config, db, log: rootLog, cache } = opts.runtime;
  const log = rootLog.child({ component: 'runs' });
  const temporal = createTemporalClientHolder(config);
  // Scenario secrets and credential_refs: the scenario role's client, never the keeper's own (issue 28).
  const scenario = withGitSources(opts.scenario ?? defaultScenarioPort(), {
    policy: config.services.git,
    secrets: opts.runtime.scenarioSecrets,
  });
  const locate = presenceLocator(cache);
  // Routing: agents go to the keeper holding their stream, SSH hosts to this keeper (it can reach them).
  const route = opts.push ? transportLocator(db, locate, config.kid) : locate;
  // Secret handles: render and dispatch derive the key that signs them from the cluster's signing key.
  const secretCfg = { nonceKey: opts.runtime.signingKey, scenarioPrefix: config.secretstore.scenario_prefix };
  // Secret inputs are written with the scenario role's client, as they are read (issue 28).
  const service = createRunService({ db, temporal, scenario, secrets: opts.runtime.scenarioSecrets, config });
  return {
    temporal,
    scenario,
    service,
    components: [
      temporalClientComponent(config, temporal, log),
      // The pruning schedule is the cluster's, not this keeper's: every keeper sets it to its config at start.
      retentionScheduleComponent(temporal, config.retention.interval_ms, log),
      temporalWorkersComponent({
        temporal,
        namespace: config.temporal.namespace,
        taskQueue: config.temporal.task_queue,
        kid: config.kid,
        log,
        shared: {
          db,
          log,
          kid: config.kid,
          scenario,
          locate: route,
          taskQueue: config.temporal.task_queue,
          cacheDir: config.services.cache_dir,
          secrets: secretCfg,
          planTtlMs: config.plans.ttl_ms,
          runs: service,
          retention: {
            plansMs: config.retention.plans_ms,
            runsMs: config.retention.runs_ms,
            activityMs: config.retention.activity_ms,
          },
          purgeSecretInputs: (inc) =>
            purgeSecretInputs(opts.runtime.scenarioSecrets, config.secretstore.scenario_prefix, inc, log),
        },
        dispatch: {
          db,
          log,
          scenario,
          sessions: opts.sessions,
          locate,
          kid: config.kid,
          secrets: { ...secretCfg, reader: opts.runtime.scenarioSecrets },
          inflight: cacheInflightLog(cache, config.temporal.task_queue),
          ...(opts.push ? { push: opts.push } : {}),
        },
      }),
      failoverComponent({
        cache,
        temporal,
        kid: config.kid,
        queue: config.temporal.task_queue,
        log,
        sessions: opts.sessions,
      }),
    ],
  };
}
