// What the Operator API needs from the keeper process.
import type { SecretInputsSource } from './secret-inputs';
import type { Metrics } from '../keeper/metrics';
import type { RuntimeWithCache } from '../keeper/runtime';

export interface ApiDeps {
  runtime: RuntimeWithCache;
  metrics: Metrics;
  /** The scenario engine, to learn which inputs are secret (api/secret-inputs.ts). */
  scenario?: SecretInputsSource;
}
