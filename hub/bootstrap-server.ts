// listen.grpc.bootstrap: server-only TLS with the keeper's leaf (the soul has no certificate yet).
// The edge: failure limits, decode, call enroll(), map its outcome to a gRPC status.
//
// Failures are limited per token (a host retrying a wrong, used or expired token is slowed down,
// and a token cannot be used to hammer the PKI with refused CSRs) and, coarsely, per source address
// for tokens the keeper never issued (noise and guessing). The address limit never refuses a token
// the keeper knows, so one failing host, or a flood of made-up tokens, behind a NAT cannot keep the
// other hosts behind the same address from onboarding.
import { createHash } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../common/logger';
import type { Component } from '../platform/component';
import type { KeeperConfig } from '../platform/config/types';
import { bootstrapService } from '../proto/load';
import type { EnrollRequest, EnrollResponse } from '../proto/types';
import { tokenSid } from '../db/repos/enrollment';
import { enroll, type EnrollDeps } from './enroll';
import { SERVER_OPTIONS, grpcComponent } from './grpc-listen';
import type { HandshakeOutcome, HubMetrics } from './metrics';
import { FailureRateLimit, sourceOf } from './rate-limit';
import type { ServerLeaf } from './server-leaf';

export interface BootstrapDeps extends EnrollDeps {
  config: KeeperConfig;
  metrics: HubMetrics;
  log: Logger;
  leaf: ServerLeaf;
}

const STATUS = {
  refused: grpc.status.UNAUTHENTICATED,
  bad_request: grpc.status.INVALID_ARGUMENT,
  unavailable: grpc.status.UNAVAILABLE,
  pki_refused: grpc.status.FAILED_PRECONDITION,
} as const;

/** The limiter's key for a token: a hash, so no token is held in memory longer than the call. */
function tokenKey(token: unknown): string {
  return `token:${createHash('sha256')
    .update(typeof token === 'string' ? token : '')
    .digest('base64url')}`;
}

export function bootstrapComponent(deps: BootstrapDeps): Component {
  const { failures, address_failures: addressFailures, window_ms: windowMs } = deps.config.auth.bootstrap_rate_limit;
  const byToken = new FailureRateLimit({ failures, windowMs });
  const byAddress = new FailureRateLimit({ failures: addressFailures, windowMs });
  const count = (outcome: HandshakeOutcome) => deps.metrics.handshakes.inc({ listener: 'bootstrap', outcome });
  const limited = (callback: grpc.sendUnaryData<EnrollResponse>, waitMs: number, what: string) => {
    count('rate_limited');
    const seconds = Math.ceil(waitMs / 1000);
    const metadata = new grpc.Metadata();
    metadata.set('retry-after', String(seconds));
    callback({
      code: grpc.status.RESOURCE_EXHAUSTED,
      details: `too many failed bootstrap attempts ${what}; retry in ${seconds}s`,
      metadata,
    });
  };

  const attempt = async (
    call: grpc.ServerUnaryCall<EnrollRequest, EnrollResponse>,
    callback: grpc.sendUnaryData<EnrollResponse>,
  ) => {
    const source = sourceOf(call.getPeer());
    const token = tokenKey(call.request.token);
    const tokenWait = byToken.retryAfterMs(token);
    if (tokenWait > 0) return limited(callback, tokenWait, 'with this token');
    const addressWait = byAddress.retryAfterMs(source);
    // Only when the address is over its limit is the token looked up: a token the keeper issued
    // passes (its own limit above still applies), a made-up one waits.
    if (
      addressWait > 0 &&
      (typeof call.request.token !== 'string' ||
        call.request.token.length > 256 ||
        (await tokenSid(deps.db, call.request.token)) === undefined)
    ) {
      return limited(callback, addressWait, `with unknown tokens from ${source}`);
    }
    const out = await enroll(deps, call.request);
    if (out.ok) {
      count('enrolled');
      return callback(null, out.response);
    }
    count(out.outcome);
    if (out.kind !== 'unavailable') byToken.recordFailure(token);
    if (out.outcome === 'token_invalid') byAddress.recordFailure(source);
    callback({ code: STATUS[out.kind], details: out.details });
  };

  const Enroll = (
    call: grpc.ServerUnaryCall<EnrollRequest, EnrollResponse>,
    callback: grpc.sendUnaryData<EnrollResponse>,
  ) => {
    attempt(call, callback).catch((err: Error) => {
      count('internal');
      deps.log.error('bootstrap failed', { error: err.message });
      callback({ code: grpc.status.UNAVAILABLE, details: 'the keeper cannot enroll souls right now; retry later' });
    });
  };

  const server = new grpc.Server(SERVER_OPTIONS);
  server.addService(bootstrapService().service, { Enroll });
  const { addr, tls } = deps.config.listen.grpc.bootstrap;
  // No client certificate is asked for: the soul proves itself with the token. The leaf comes from
  // the renewable source (hub/server-leaf.ts), so a renewed certificate is served without a restart.
  return grpcComponent('bootstrap listener', addr, server, () => deps.leaf.credentials(tls, null));
}
