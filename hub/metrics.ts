// The hub's Prometheus metrics, registered in the keeper's one registry (platform/metrics.ts).
import client from 'prom-client';
import type { Metrics } from '../platform/metrics';

export type HandshakeOutcome =
  // bootstrap listener
  | 'enrolled'
  | 'token_invalid'
  | 'token_expired'
  | 'token_used'
  | 'token_wrong_sid'
  | 'rate_limited'
  | 'bad_request'
  | 'pki_error'
  | 'pki_refused'
  | 'pki_misconfigured'
  | 'internal'
  // event-stream listener
  | 'accepted'
  | 'no_certificate'
  | 'not_registered'
  | 'not_onboarded'
  | 'revoked'
  | 'old_certificate'
  | 'fqdn_mismatch'
  | 'invalid_soulprint'
  | 'no_hello'
  | 'presence_error'
  | 'busy';

export interface HubMetrics {
  soulsConnected: client.Gauge;
  handshakes: client.Counter<'listener' | 'outcome'>;
  streamMessages: client.Counter<'direction' | 'type'>;
  reconcilerLag: client.Histogram;
  reconcilerPass: client.Histogram;
  reconcilerCorrections: client.Counter<'to'>;
  renewals: client.Counter<'outcome'>;
  leafRenewals: client.Counter<'outcome'>;
  leafNotAfter: client.Gauge;
}

export function createHubMetrics(metrics: Metrics): HubMetrics {
  const registers = [metrics.registry];
  return {
    soulsConnected: new client.Gauge({
      name: 'keeper_souls_connected',
      help: 'Live soul streams held by this keeper',
      registers,
    }),
    handshakes: new client.Counter({
      name: 'keeper_handshakes_total',
      help: 'Soul handshakes by listener (bootstrap, event_stream) and outcome',
      labelNames: ['listener', 'outcome'],
      registers,
    }),
    streamMessages: new client.Counter({
      name: 'keeper_stream_messages_total',
      help: 'Event-stream messages by direction (in from souls, out to souls) and type',
      labelNames: ['direction', 'type'],
      registers,
    }),
    reconcilerLag: new client.Histogram({
      name: 'keeper_reconciler_lag_seconds',
      help: 'Time from a lease running out (holder vanished) to the registry showing the soul disconnected',
      buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
      registers,
    }),
    reconcilerPass: new client.Histogram({
      name: 'keeper_reconciler_pass_seconds',
      help: 'Duration of one reconciler pass',
      buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
      registers,
    }),
    reconcilerCorrections: new client.Counter({
      name: 'keeper_reconciler_corrections_total',
      help: 'Registry rows the reconciler changed, by the status written',
      labelNames: ['to'],
      registers,
    }),
    renewals: new client.Counter({
      name: 'keeper_soul_certificate_renewals_total',
      help: 'Soul certificate rotations over the event stream by outcome (renewed, promoted, refused, too_early, pki_error, pki_refused, pki_misconfigured, superseded)',
      labelNames: ['outcome'],
      registers,
    }),
    leafRenewals: new client.Counter({
      name: 'keeper_server_certificate_renewals_total',
      help: "The gRPC listeners' own certificate renewed from the PKI or reloaded from its files, by outcome (renewed, reloaded, pki_error, pki_misconfigured)",
      labelNames: ['outcome'],
      registers,
    }),
    leafNotAfter: new client.Gauge({
      name: 'keeper_server_certificate_not_after_seconds',
      help: 'Expiry of the certificate the gRPC listeners serve (Unix time)',
      registers,
    }),
  };
}
