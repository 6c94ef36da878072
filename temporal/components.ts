// What the keeper process adds for incarnation runs: the Temporal client (used by the API to start
// runs) and the two workers (temporal/worker.ts). Listed after the hub's components, so at shutdown
// the workers stop before the soul sessions they dispatch through.
import { presenceLocator } from '../activities/presence-lookup';
import type { StepSender } from '../activities/deps';
import { defaultScenarioPort } from '../activities/scenario-adapter';
import type { ScenarioPort } from '../activities/scenario-port';
import type { Component } from '../keeper/component';
import type { RuntimeWithCache } from '../keeper/runtime';
import { withGitSources } from './git-access';
import { createTemporalClientHolder, temporalClientComponent, type TemporalClientHolder } from './client';
import { temporalTlsOptions } from './tls';
import { temporalWorkersComponent } from './worker';

export interface RunComponentsOptions {
  runtime: RuntimeWithCache;
  sessions: StepSender;
  /** Replaces the scenario engine (tests); default: scenario/ through activities/scenario-adapter.ts. */
  scenario?: ScenarioPort;
}

export function createRunComponents(opts: RunComponentsOptions): { temporal: TemporalClientHolder; scenario: ScenarioPort; components: Component[] } {
  const { config, db, log: rootLog, cache } = opts.runtime;
  const log = rootLog.child({ component: 'runs' });
  const temporal = createTemporalClientHolder(config);
  const scenario = withGitSources(opts.scenario ?? defaultScenarioPort(), { policy: config.services.git, secrets: opts.runtime.secrets });
  const locate = presenceLocator(cache);
  // Secret markers: render and dispatch derive each run's nonce from the cluster's signing key.
  const secretCfg = { nonceKey: opts.runtime.signingKey, scenarioPrefix: config.secretstore.scenario_prefix };
  return {
    temporal,
    scenario,
    components: [
      temporalClientComponent(config, temporal),
      temporalWorkersComponent({
        address: config.temporal.address, tls: temporalTlsOptions(config.temporal.tls), namespace: config.temporal.namespace, taskQueue: config.temporal.task_queue, kid: config.kid, log,
        shared: { db, log, scenario, locate, taskQueue: config.temporal.task_queue, cacheDir: config.services.cache_dir, secrets: secretCfg },
        dispatch: { db, log, scenario, sessions: opts.sessions, locate, kid: config.kid, secrets: { ...secretCfg, reader: opts.runtime.secrets } },
      }),
    ],
  };
}
