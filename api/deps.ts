// What the Operator API needs from the keeper process.
import type { SecretInputsSource } from './secret-inputs';
import type { Metrics } from '../platform/metrics';
import type { RuntimeWithCache } from '../platform/runtime';

export interface ApiDeps {
  runtime: RuntimeWithCache;
  metrics: Metrics;
  /** The scenario engine, to learn which inputs are secret (api/secret-inputs.ts). */
  scenario?: SecretInputsSource;
  /** The SSH transport's reachability check (hub/ssh); absent: POST /v1/souls/{sid}/check answers 503. */
  ssh?: SshCheck;
}

export interface SshCheck {
  check(sid: string): Promise<{ reachable: boolean; reason: string | null; facts: Record<string, unknown> | null; checked_at: string }>;
}
