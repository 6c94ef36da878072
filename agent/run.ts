// `soul run` (interface spec 4.4): hold the EventStream over mTLS for as long as the process lives.
// Endpoints are tried by priority (lowest first). A healthy stream that is lost (its keeper killed)
// is followed by a new round at once, within a jitter of 0.1 s (agent/reconnect.ts); after a round
// with no answer, or a stream that ended young, the soul waits an exponential, jittered delay
// (agent/backoff.ts); each round starts again from the preferred endpoint. A keeper that says
// goodbye{shutdown} is left within 0.5 s for the next endpoint. A keeper at
// its accept rate (a reconnect storm) names when to come back: the soul tries its other endpoints,
// then waits that long, jittered (agent/busy.ts), without growing its backoff, and never gives up.
// A soul told goodbye{superseded} stops: another process holds this identity (docs/agents.md).
// Certificates rotate on the live stream (agent/rotation.ts); goodbye{rotated} means reconnect at
// once with the staged identity, which becomes the main one once it has connected. A certificate
// that expired while the soul was away cannot be renewed: the soul stops and says what to do.
import type { Logger } from '../common/logger';
import { Backoff, type BackoffOptions } from './backoff';
import { busyDelay } from './busy';
import { byPriority, readCa, type SoulConfig } from './config';
import { SoulError, certificateExpired, sidMismatch } from './errors';
import { collectSoulprint, type FactSources } from './facts';
import { findFqdn } from './fqdn';
import { GrpcStatus } from './grpc-stream';
import {
  discardStagedIdentity,
  loadIdentity,
  loadStagedIdentity,
  promoteStagedIdentity,
  stageIdentity,
  type Identity,
} from './identity';
import { Rotation } from './rotation';
import { NO_METRICS, startSoulMetrics, type SoulMetrics } from './metrics';
import { delayAfterLoss } from './reconnect';
import { createStateStepHandler, ledgerDir, type StepHandler } from './steps';
import { holdStream } from './stream-session';
import { readStatus, writeStatus } from './status';

export interface RunOptions {
  config: SoulConfig;
  log: Logger;
  /** Stops the soul (SIGTERM). */
  signal: AbortSignal;
  handler?: StepHandler;
  fqdn?: () => Promise<string>;
  factSources?: FactSources;
  factsIntervalMs?: number;
  backoff?: BackoffOptions;
  onWelcome?: (w: { kid: string; epoch: number; sessionId: string; endpoint: string }) => void;
}

export async function soulRun(o: RunOptions): Promise<void> {
  const { config } = o;
  const ca = readCa(config);
  const identity = loadStagedIdentity(config.paths.seed) ?? loadIdentity(config.paths.seed);
  const fqdn = await (o.fqdn ?? findFqdn)();
  if (fqdn !== config.sid) throw sidMismatch(fqdn, config.sid, config.file);
  if (identity.sid !== config.sid) {
    throw new SoulError(
      `the identity under ${config.paths.seed} is for ${identity.sid}, not ${config.sid}`,
      `point paths.seed at this host's identity, or remove it and re-enroll`,
      2,
    );
  }
  const base = o.handler ?? (await openDefaultHandler(config, fqdn, o.factSources));
  let metrics = NO_METRICS;
  if (config.metrics) {
    try {
      metrics = await startSoulMetrics({
        port: config.metrics.port,
        ledgerDir: ledgerDir(config),
        certPem: identity.certPem,
      });
      o.log.info('metrics listener', { addr: `127.0.0.1:${config.metrics.port}` });
    } catch (err) {
      if (!o.handler) await base.close?.();
      throw new SoulError(
        `cannot listen for metrics on 127.0.0.1:${config.metrics.port}: ${(err as Error).message}`,
        'choose a free port for metrics.port, or remove the metrics block',
      );
    }
  }
  const handler = metrics.wrap(base);
  try {
    await hold(o, handler, ca, fqdn, metrics);
  } finally {
    // `soul status` then says the soul stopped, and since when (a SIGKILL leaves the last state, which
    // `soul status` corrects by checking the pid).
    writeStatus(config.paths.seed, {
      ...lastStatus(config.paths.seed),
      state: 'stopped',
      since: new Date().toISOString(),
      pid: process.pid,
    });
    await metrics.close();
    if (!o.handler) await base.close?.(); // an injected handler belongs to the caller
  }
}

async function openDefaultHandler(config: SoulConfig, fqdn: string, sources?: FactSources): Promise<StepHandler> {
  try {
    return await createStateStepHandler({ sid: config.sid, config, soulprint: collectSoulprint(fqdn, sources) });
  } catch (err) {
    throw new SoulError(
      `cannot open the step ledger: ${(err as Error).message}`,
      'run one soul process per host; if none is running, check that paths.seed is writable',
    );
  }
}

async function hold(
  o: RunOptions,
  handler: StepHandler,
  ca: Buffer,
  fqdn: string,
  metrics: SoulMetrics,
): Promise<void> {
  const { config, log } = o;
  const seed = config.paths.seed;
  const backoff = new Backoff(o.backoff);
  while (!o.signal.aborted) {
    let delay: number | undefined;
    let busyHintMs: number | undefined;
    for (const endpoint of byPriority(config.keeper.endpoints)) {
      if (o.signal.aborted) return;
      // A staged identity (from a rotation) is tried first; the main one stays until it has connected.
      const staged = loadStagedIdentity(seed);
      const identity: Identity = staged ?? loadIdentity(seed);
      if (identity.notAfter.getTime() <= Date.now()) throw certificateExpired(config.sid, identity.notAfter);
      const rotation = new Rotation({
        sid: config.sid,
        ca,
        notBefore: identity.notBefore,
        notAfter: identity.notAfter,
        log,
        stage: (parts) => stageIdentity(seed, parts),
        count: (outcome) => metrics.rotation(outcome),
      });
      const end = await holdStream({
        endpoint,
        creds: { ca, keyPem: identity.keyPem, certPem: identity.certPem },
        handler,
        log,
        signal: o.signal,
        rotation,
        onWelcome: (w) => {
          if (staged) {
            promoteStagedIdentity(seed);
            metrics.certificate(staged.certPem);
            log.info('connected with the renewed certificate', { not_after: staged.notAfter.toISOString() });
          }
          // uptime_ms: how long after its start this process got its Welcome (a slow host shows here).
          log.info('connected', {
            kid: w.kid,
            epoch: w.epoch,
            endpoint: w.endpoint,
            uptime_ms: Math.round(process.uptime() * 1000),
          });
          metrics.connected(w.kid);
          writeStatus(seed, {
            state: 'connected',
            kid: w.kid,
            endpoint: w.endpoint,
            session_id: w.sessionId,
            since: new Date().toISOString(),
            pid: process.pid,
          });
          o.onWelcome?.(w);
        },
        soulprint: () => collectSoulprint(fqdn, o.factSources),
        factsIntervalMs: o.factsIntervalMs ?? 60_000,
      });
      const where = `${endpoint.host}:${endpoint.event_stream_port}`;
      if (end.welcomed) {
        metrics.disconnected();
        if (!o.signal.aborted) {
          const last = lastStatus(seed);
          writeStatus(seed, {
            ...last,
            state: 'disconnected',
            since: new Date().toISOString(),
            reason: end.goodbye !== undefined ? `goodbye: ${end.goodbye}` : end.reason,
            pid: process.pid,
          });
        }
      }
      if (o.signal.aborted) return;
      if (end.goodbye === 'revoked') {
        throw new SoulError(
          `an operator revoked ${config.sid}: the keeper closed the stream and refuses this identity`,
          'to bring the host back, an operator issues a new bootstrap token with force; then run soul init with it',
        );
      }
      if (end.goodbye === 'superseded') {
        throw new SoulError(
          `another stream for ${config.sid} superseded this one (goodbye: superseded)`,
          'run one soul per identity: stop the other `soul run` that uses this paths.seed (or a copy of it)',
        );
      }
      if (end.goodbye === 'rotated' || (rotation.staged && end.welcomed)) {
        // The keeper keeps the soul's presence for this reconnect: no backoff.
        log.info('reconnecting with the renewed certificate', { endpoint: where });
        delay = 0;
        break;
      }
      if (staged && !end.welcomed && end.code === GrpcStatus.PERMISSION_DENIED) {
        // The keeper does not know the staged certificate (the soul was onboarded again meanwhile):
        // the main identity decides from here on.
        log.warn('the renewed certificate was refused; using the previous one', {
          endpoint: where,
          reason: end.reason,
        });
        discardStagedIdentity(seed);
        delay = 0;
        break;
      }
      if (end.welcomed) {
        log.warn('stream lost', { endpoint: where, reason: end.reason, after_ms: end.durationMs });
        delay = delayAfterLoss(end, backoff);
        break;
      }
      if (end.retryAfterMs !== undefined) {
        // The keeper is alive and keeps a slot for this soul: the shortest hint of the round wins.
        log.info('keeper busy', { endpoint: where, retry_after_ms: end.retryAfterMs });
        busyHintMs = Math.min(busyHintMs ?? Infinity, end.retryAfterMs);
        continue;
      }
      log.warn('endpoint refused or unreachable', { endpoint: where, reason: end.reason });
    }
    if (delay === 0) continue;
    if (delay === undefined && busyHintMs !== undefined) delay = busyDelay(busyHintMs);
    delay ??= backoff.next();
    metrics.reconnect();
    log.info('reconnecting', { in_ms: delay });
    await sleep(delay, o.signal);
  }
}

/** The kid and endpoint of the last stream, kept when the state changes. */
function lastStatus(seed: string): { kid?: string; endpoint?: string } {
  const s = readStatus(seed);
  return s === undefined ? {} : { kid: s.kid, endpoint: s.endpoint };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
