// What the Operator API needs from the keeper process.
import type { Metrics } from '../keeper/metrics';
import type { RuntimeWithCache } from '../keeper/runtime';

export interface ApiDeps { runtime: RuntimeWithCache; metrics: Metrics }
