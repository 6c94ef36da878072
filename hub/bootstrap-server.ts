// listen.grpc.bootstrap: server-only TLS with the keeper's leaf (the soul has no certificate yet).
// The edge: rate limit by source, decode, call enroll(), map its outcome to a gRPC status.
import fs from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../common/logger';
import type { Component } from '../keeper/component';
import type { KeeperConfig } from '../keeper/config/types';
import { services } from '../proto/load';
import type { EnrollRequest, EnrollResponse } from '../proto/types';
import { enroll, type EnrollDeps } from './enroll';
import { SERVER_OPTIONS, grpcComponent } from './grpc-listen';
import type { HandshakeOutcome, HubMetrics } from './metrics';
import { FailureRateLimit, sourceOf } from './rate-limit';

export interface BootstrapDeps extends EnrollDeps { config: KeeperConfig; metrics: HubMetrics; log: Logger }

const STATUS = { refused: grpc.status.UNAUTHENTICATED, bad_request: grpc.status.INVALID_ARGUMENT, unavailable: grpc.status.UNAVAILABLE } as const;

export function bootstrapComponent(deps: BootstrapDeps): Component {
  const limits = new FailureRateLimit({
    failures: deps.config.auth.bootstrap_rate_limit.failures, windowMs: deps.config.auth.bootstrap_rate_limit.window_ms,
  });
  const count = (outcome: HandshakeOutcome) => deps.metrics.handshakes.inc({ listener: 'bootstrap', outcome });

  const Enroll = (call: grpc.ServerUnaryCall<EnrollRequest, EnrollResponse>, callback: grpc.sendUnaryData<EnrollResponse>) => {
    const source = sourceOf(call.getPeer());
    const wait = limits.retryAfterMs(source);
    if (wait > 0) {
      count('rate_limited');
      const seconds = Math.ceil(wait / 1000);
      const metadata = new grpc.Metadata();
      metadata.set('retry-after', String(seconds));
      callback({ code: grpc.status.RESOURCE_EXHAUSTED, details: `too many failed bootstrap attempts from ${source}; retry in ${seconds}s`, metadata });
      return;
    }
    enroll(deps, call.request).then((out) => {
      if (out.ok) { count('enrolled'); return callback(null, out.response); }
      count(out.outcome);
      if (out.kind !== 'unavailable') limits.recordFailure(source);
      callback({ code: STATUS[out.kind], details: out.details });
    }, (err: Error) => {
      count('internal');
      deps.log.error('bootstrap failed', { error: err.message });
      callback({ code: grpc.status.UNAVAILABLE, details: 'the keeper cannot enroll souls right now; retry later' });
    });
  };

  const server = new grpc.Server(SERVER_OPTIONS);
  server.addService(services().bootstrap.service, { Enroll });
  const { addr, tls } = deps.config.listen.grpc.bootstrap;
  // No client certificate is asked for: the soul proves itself with the token.
  return grpcComponent('bootstrap listener', addr, server, () =>
    grpc.ServerCredentials.createSsl(null, [{ cert_chain: fs.readFileSync(tls.cert), private_key: fs.readFileSync(tls.key) }], false));
}
