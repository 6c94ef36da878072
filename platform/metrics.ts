// The Prometheus registry: process metrics plus the keeper's own. Other parts register their
// metrics here (hub, API, runs) so one /metrics on the metrics listener shows everything.
import client from 'prom-client';
import { registerFullGcMetrics } from '../common/heap-after-gc';

export interface Metrics {
  registry: client.Registry;
  httpRequests: client.Counter<'method' | 'route' | 'status'>;
  httpDuration: client.Histogram<'method' | 'route'>;
  ready: client.Gauge<'dependency'>;
}

export function createMetrics(kid: string, version: string): Metrics {
  const registry = new client.Registry();
  registry.setDefaultLabels({ kid });
  client.collectDefaultMetrics({ register: registry });
  new client.Gauge({
    name: 'keeper_build_info',
    help: 'Keeper version running on this instance',
    labelNames: ['version'],
    registers: [registry],
  }).set({ version }, 1);
  registerFullGcMetrics(client, registry, 'keeper');
  return {
    registry,
    httpRequests: new client.Counter({
      name: 'keeper_http_requests_total',
      help: 'Operator API requests by route and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new client.Histogram({
      name: 'keeper_http_request_duration_seconds',
      help: 'Operator API latency',
      labelNames: ['method', 'route'],
      buckets: [0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5, 1, 5],
      registers: [registry],
    }),
    ready: new client.Gauge({
      name: 'keeper_dependency_up',
      help: '1 when the dependency answered the last readiness check',
      labelNames: ['dependency'],
      registers: [registry],
    }),
  };
}
