// listen.grpc.event_stream: mTLS against the PKI CA; one EventStream.Connect call per soul. The
// handler decodes, checks, converts and hands over to Sessions; it holds no presence logic itself.
// Order on a new stream: certificate -> accept rate (hub/accept-rate.ts) -> Hello (within
// HELLO_TIMEOUT_MS) -> soulprint names the same host as the certificate -> the SID is a registered
// agent soul -> lease -> Welcome.
import * as grpc from '@grpc/grpc-js';
import type { Knex } from 'knex';
import type { Logger } from '../common/logger';
import { normalSerial, promotePending } from '../db/repos/certificates';
import { agentAdmission } from '../db/repos/presence';
import type { Component } from '../platform/component';
import type { KeeperConfig } from '../platform/config/types';
import { eventStreamService } from '../proto/load';
import type { KeeperMessage, SoulMessage, Soulprint } from '../proto/types';
import { AcceptRate, retryAfterValue } from './accept-rate';
import { SERVER_OPTIONS, grpcComponent } from './grpc-listen';
import { checkSoulprint } from './soulprint';
import type { HandshakeOutcome, HubMetrics } from './metrics';
import { peerIdentity } from './peer-identity';
import { renewOnStream, type PresentedCertificate } from './renewal';
import type { ServerLeaf } from './server-leaf';
import type { Session } from './session';
import type { Sessions } from './sessions';
import type { SoulSigner } from './soul-certificate';

export { normalSerial } from '../db/repos/certificates';

const HELLO_TIMEOUT_MS = 10_000;

type Call = grpc.ServerDuplexStream<SoulMessage, KeeperMessage>;

export interface EventStreamDeps extends SoulSigner {
  config: KeeperConfig;
  db: Knex;
  log: Logger;
  metrics: HubMetrics;
  sessions: Sessions;
  leaf: ServerLeaf;
  /** Closes, on every keeper, the streams of `sid` opened with any certificate but `keepSerial` (hub/revocations.ts). */
  retire?: (sid: string, keepSerial: string) => Promise<void>;
}

function refuse(
  deps: EventStreamDeps,
  call: Call,
  code: grpc.status,
  outcome: HandshakeOutcome,
  details: string,
  sid?: string,
): void {
  deps.metrics.handshakes.inc({ listener: 'event_stream', outcome });
  deps.log.warn('event stream refused', { sid, outcome, peer: call.getPeer() });
  call.emit('error', { code, details });
}

/**
 * Over hub.accept_rate: refused before any registry read or lease, with the slot to come back at
 * (metadata `retry-after`, seconds, as on the bootstrap listener). Logged at debug only: in a storm
 * these are thousands of expected answers, and the metric counts them.
 */
function refuseBusy(deps: EventStreamDeps, call: Call, waitMs: number, sid: string): void {
  deps.metrics.handshakes.inc({ listener: 'event_stream', outcome: 'busy' });
  deps.log.debug('event stream refused: over the accept rate', { sid, retry_after_ms: waitMs });
  const metadata = new grpc.Metadata();
  metadata.set('retry-after', retryAfterValue(waitMs));
  call.emit('error', {
    code: grpc.status.RESOURCE_EXHAUSTED,
    details: `the keeper is accepting streams at its limit; retry in ${retryAfterValue(waitMs)}s`,
    metadata,
  });
}

/** A soulprint not naming the certificate's SID is an identity problem; any other bad fact is bad input. */
function refuseSoulprint(deps: EventStreamDeps, call: Call, v: { field: string; reason: string }, sid: string): void {
  if (v.field === 'fqdn')
    return refuse(deps, call, grpc.status.PERMISSION_DENIED, 'fqdn_mismatch', `the soulprint ${v.reason}`, sid);
  const name = v.field === 'soulprint' ? 'the soulprint' : `soulprint.${v.field}`;
  refuse(deps, call, grpc.status.INVALID_ARGUMENT, 'invalid_soulprint', `${name} ${v.reason}`, sid);
}

function handleConnect(deps: EventStreamDeps, acceptRate: AcceptRate, call: Call): void {
  const identity = peerIdentity(call.getAuthContext());
  if (!identity.ok) return refuse(deps, call, grpc.status.UNAUTHENTICATED, 'no_certificate', identity.reason);
  const sid = identity.sid;
  const waitMs = acceptRate.take(sid);
  if (waitMs > 0) return refuseBusy(deps, call, waitMs, sid);
  let session: Session | undefined;
  let ended = false;
  const helloTimer = setTimeout(
    () => refuse(deps, call, grpc.status.FAILED_PRECONDITION, 'no_hello', 'send Hello first'),
    HELLO_TIMEOUT_MS,
  );

  const onEnd = (reason: string) => {
    if (ended) return;
    ended = true;
    clearTimeout(helloTimer);
    if (session) void deps.sessions.end(session, reason);
  };
  call.on('end', () => {
    onEnd('stream closed by the soul');
    call.end();
  });
  call.on('cancelled', () => onEnd('stream cancelled'));
  call.on('error', (err: Error) => onEnd(`stream error: ${err.message}`));
  call.on('close', () => onEnd('stream closed'));

  let opening = false;
  call.on('data', (m: SoulMessage) => {
    deps.metrics.streamMessages.inc({ direction: 'in', type: m.msg ?? 'unknown' });
    if (!session) {
      if (opening) return; // messages before Welcome are dropped; the soul waits for Welcome
      if (m.msg !== 'hello')
        return refuse(deps, call, grpc.status.FAILED_PRECONDITION, 'no_hello', 'the first message must be Hello', sid);
      opening = true;
      clearTimeout(helloTimer);
      void open(deps, call, sid, identity.serial, m.hello.soulprint).then((s) => {
        if (!s) return;
        session = s;
        if (ended) void deps.sessions.end(s, 'stream ended during the handshake');
      });
      return;
    }
    session.lastHeartbeat = Date.now();
    switch (m.msg) {
      case 'heartbeat':
        return;
      case 'facts': {
        const checked = checkSoulprint(m.facts.soulprint, sid);
        if (!checked.ok) return refuseSoulprint(deps, call, checked, sid);
        void deps.sessions.updateSoulprint(session, checked.soulprint);
        return;
      }
      case 'step_progress':
        session.onProgress(m.step_progress);
        return;
      case 'step_result':
        if (!session.onResult(m.step_result))
          deps.log.warn('step result for no pending request', { sid, request_id: m.step_result.request_id });
        return;
      case 'renew_certificate': {
        const presented: PresentedCertificate = {
          serial: identity.serial,
          notBefore: identity.notBefore,
          notAfter: identity.notAfter,
        };
        void renewOnStream(deps, session, presented, m.renew_certificate.csr_pem);
        return;
      }
      default:
        return;
    }
  });
}

async function open(
  deps: EventStreamDeps,
  call: Call,
  sid: string,
  serial: string,
  soulprint: Soulprint | null,
): Promise<Session | undefined> {
  const checked = checkSoulprint(soulprint, sid);
  if (!checked.ok) {
    refuseSoulprint(deps, call, checked, sid);
    return undefined;
  }
  soulprint = checked.soulprint;
  try {
    const admission = await agentAdmission(deps.db, sid);
    if (!admission.registered) {
      refuse(deps, call, grpc.status.PERMISSION_DENIED, 'not_registered', `soul ${sid} is not registered`, sid);
      return undefined;
    }
    // Registered but never onboarded here (registered again after a DELETE, or a registry rebuilt):
    // a certificate from before cannot stand in for the bootstrap token, even one the PKI signed.
    if (!admission.onboarded && !admission.revoked) {
      refuse(
        deps,
        call,
        grpc.status.PERMISSION_DENIED,
        'not_onboarded',
        `soul ${sid} is registered but was never onboarded: run soul init on the host with a bootstrap token (POST /v1/souls/${sid}/issue-token)`,
        sid,
      );
      return undefined;
    }
    if (admission.revoked) {
      refuse(
        deps,
        call,
        grpc.status.PERMISSION_DENIED,
        'revoked',
        `soul ${sid} is revoked: an operator must issue a new bootstrap token (with force) and run soul init on the host`,
        sid,
      );
      return undefined;
    }
    // One live certificate per soul: the one issued last. An older one (before a re-onboarding)
    // is refused even while it is unexpired. Souls onboarded before serials were kept have none.
    // A rotation's pending certificate is admitted too; its first handshake makes it the live one
    // and retires the certificate it replaces.
    const pending = admission.pendingSerial !== null && normalSerial(admission.pendingSerial) === normalSerial(serial);
    if (pending) {
      if (!(await promotePending(deps.db, sid, admission.pendingSerial!))) {
        refuse(
          deps,
          call,
          grpc.status.PERMISSION_DENIED,
          'old_certificate',
          `this certificate of ${sid} is no longer admitted (onboarded again meanwhile)`,
          sid,
        );
        return undefined;
      }
      deps.metrics.renewals.inc({ outcome: 'promoted' });
      // The renewed certificate is the live one from now: a stream of the one it replaces (a copy
      // of the old key elsewhere) ends on every keeper before this one is served.
      await deps.retire?.(sid, admission.pendingSerial!);
    } else if (admission.certSerial !== null && normalSerial(admission.certSerial) !== normalSerial(serial)) {
      refuse(
        deps,
        call,
        grpc.status.PERMISSION_DENIED,
        'old_certificate',
        `this certificate of ${sid} was replaced by a newer one; the host must use its current identity (or be onboarded again)`,
        sid,
      );
      return undefined;
    }
  } catch (err) {
    refuse(deps, call, grpc.status.UNAVAILABLE, 'presence_error', 'the registry is unavailable; retry', sid);
    deps.log.warn('registry lookup failed', { sid, error: (err as Error).message });
    return undefined;
  }
  const sink = {
    write: (msg: KeeperMessage) => {
      deps.metrics.streamMessages.inc({ direction: 'out', type: Object.keys(msg)[0]! });
      call.write(msg);
    },
    end: () => call.end(),
  };
  let session: Session;
  try {
    session = await deps.sessions.open(sid, soulprint, sink, serial);
  } catch (err) {
    refuse(deps, call, grpc.status.UNAVAILABLE, 'presence_error', 'the presence store is unavailable; retry', sid);
    deps.log.warn('cannot take presence lease', { sid, error: (err as Error).message });
    return undefined;
  }
  deps.metrics.handshakes.inc({ listener: 'event_stream', outcome: 'accepted' });
  session.write({
    welcome: {
      session_id: session.id,
      epoch: session.epoch,
      heartbeat_interval_ms: deps.sessions.heartbeatIntervalMs,
      kid: deps.config.kid,
    },
  });
  return session;
}

export function eventStreamComponent(deps: EventStreamDeps): Component {
  const server = new grpc.Server(SERVER_OPTIONS);
  const { per_second, burst } = deps.config.hub.accept_rate;
  const acceptRate = new AcceptRate({ perSecond: per_second, burst });
  server.addService(eventStreamService().service, {
    Connect: (call: Call) => handleConnect(deps, acceptRate, call),
  });
  const tls = deps.config.listen.grpc.event_stream.tls;
  // Client certificates must chain to tls.ca; the leaf is renewable in place (hub/server-leaf.ts).
  return grpcComponent(
    'event stream listener',
    deps.config.listen.grpc.event_stream.addr,
    server,
    () => deps.leaf.credentials(tls, tls.ca),
    () => deps.sessions.closeAll(),
  );
}
