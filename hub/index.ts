// The hub: what the keeper process starts for souls (bootstrap listener, event-stream listener,
// presence reconciler) and the `sessions` object through which workers dispatch steps.
import type { Component } from '../platform/component';
import type { Metrics } from '../platform/metrics';
import type { RuntimeWithCache } from '../platform/runtime';
import { bootstrapComponent } from './bootstrap-server';
import { eventStreamComponent } from './event-stream-server';
import { leafRenewalComponent } from './leaf-renewal';
import { createHubMetrics } from './metrics';
import { Presence } from './presence';
import { reconcilerComponent } from './reconciler';
import { factsRefreshListener } from './facts-refresh';
import { publishRetired, revocationListener } from './revocations';
import { ServerLeaf } from './server-leaf';
import { Sessions } from './sessions';

export { Sessions } from './sessions';
export { publishRevoked } from './revocations';
export type { StepOrder, StepReport, SendStepOptions } from './session';
export { DispatchError, SoulNotConnected, StepTimeout, StepInterrupted, StepCancelled } from './dispatch-errors';

export interface Hub {
  /** In start order: listeners first, so a stopping keeper drains streams before the reconciler stops. */
  components: Component[];
  sessions: Sessions;
  presence: Presence;
}

export function createHubComponents(runtime: RuntimeWithCache, metrics: Metrics): Hub {
  const { config, db, cache } = runtime;
  const log = runtime.log.child({ component: 'hub' });
  const hubMetrics = createHubMetrics(metrics);
  const presence = new Presence(cache, config.kid, config.reaper.lease_ttl_ms);
  const sessions = new Sessions({ db, presence, kid: config.kid, log, metrics: hubMetrics });
  const ticker: Component = {
    name: 'presence lease refresher',
    async start() {
      sessions.start();
    },
    async stop() {
      /* the event-stream listener's stop drains the sessions and stops the ticker */
    },
  };
  const leaf = new ServerLeaf();
  const signer = {
    signCsr: (csr: string, cn: string, ttl?: string) => runtime.secrets.signCsr(csr, cn, ttl),
    soulCertTtlMs: config.secretstore.soul_cert_ttl_ms,
  };
  const retire = (sid: string, keepSerial: string) => publishRetired(cache, sid, keepSerial);
  const sl = config.secretstore.server_leaf;
  return {
    sessions,
    presence,
    components: [
      reconcilerComponent({
        db,
        cache,
        presence,
        kid: config.kid,
        intervalMs: config.reaper.interval_ms,
        log,
        metrics: hubMetrics,
      }),
      ticker,
      bootstrapComponent({ config, db, log, metrics: hubMetrics, leaf, retire, ...signer }),
      eventStreamComponent({ config, db, log, metrics: hubMetrics, sessions, leaf, retire, ...signer }),
      leafRenewalComponent({
        leaf,
        log,
        metrics: hubMetrics,
        issue: (req) => runtime.secrets.issueCertificate(req),
        ...(sl
          ? {
              renew: {
                role: sl.pki_role,
                commonName: sl.common_name,
                altNames: sl.alt_names,
                ipSans: sl.ip_sans,
                ttlMs: sl.ttl_ms,
              },
            }
          : {}),
      }),
      revocationListener(cache, sessions, log),
      factsRefreshListener(cache, sessions, log),
    ],
  };
}
