// What the run service is made of (createRunService): the database, the Temporal client, the
// scenario engine (the same port the workers use), the scenario role's secrets store, and config.
// Every file of runs/start/ takes this one object instead of the API's deps.
import type { Knex } from 'knex';
import type { KeeperConfig } from '../../platform/config/types';
import type { SecretStore } from '../../secrets/client';
import type { ScenarioPort } from '../activities/scenario-port';
import { runUiUrl, type TemporalClientHolder } from '../connection';
import { refuse } from './outcome';

export interface RunServiceDeps {
  db: Knex;
  /** Absent or not connected: every start is refused as `unavailable`, nothing recorded. */
  temporal?: TemporalClientHolder;
  /** Absent: every start is refused as `unavailable` (the service cannot be checked). */
  scenario?: Pick<ScenarioPort, 'loadService' | 'checkRun'>;
  /** Where secret inputs are written before a run is recorded (the scenario role, issue 28). */
  secrets: Pick<SecretStore, 'writeFields'>;
  config: Pick<KeeperConfig, 'services' | 'secretstore' | 'plans' | 'temporal'>;
}

export function temporalOf(deps: RunServiceDeps): TemporalClientHolder {
  const t = deps.temporal;
  if (!t?.client) throw refuse.temporal();
  return t;
}

export function scenarioOf(deps: RunServiceDeps): NonNullable<RunServiceDeps['scenario']> {
  if (!deps.scenario) throw refuse.unavailable('the scenario engine');
  return deps.scenario;
}

/** The run's page in the Temporal Web UI. */
export const uiLink = (deps: RunServiceDeps, applyId: string) => {
  const t = deps.temporal;
  const c = deps.config.temporal;
  return runUiUrl(t?.uiUrl ?? c.ui_url, t?.namespace ?? c.namespace, applyId);
};
