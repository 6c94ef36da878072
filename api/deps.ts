// What the Operator API needs from the keeper process.
import type { Metrics } from '../platform/metrics';
import type { RuntimeWithCache } from '../platform/runtime';
import type { RunService } from '../runs/index';

export interface ApiDeps {
  runtime: RuntimeWithCache;
  metrics: Metrics;
  /** Where every run, plan and catalog load begins (runs/start/service.ts); routes decode, call it and map the outcome. */
  runs: RunService;
  /** The SSH transport's reachability check (hub/ssh); absent: POST /v1/souls/{sid}/check answers 503. */
  ssh?: SshCheck;
}

export interface SshCheck {
  check(
    sid: string,
  ): Promise<{ reachable: boolean; reason: string | null; facts: Record<string, unknown> | null; checked_at: string }>;
}
