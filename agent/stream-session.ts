// One attempt at holding the EventStream to one endpoint: Hello with the soulprint, wait for
// Welcome, heartbeat at the keeper's interval, send Facts when they change, run step requests
// through the StepHandler (cancellable), and report how the stream ended.
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../common/logger';
import { eventStreamService } from '../proto/load';
import type { GoodbyeReason, OutgoingSoulMessage, ReceivedKeeperMessage, Soulprint, StepRequestMsg } from '../proto/types';
import { busyRetryAfterMs } from './busy';
import type { Endpoint } from './config';
import { sameSoulprint } from './facts';
import type { Rotation } from './rotation';
import type { StepReply, StepHandler } from './steps';
import { VERSION as SOUL_VERSION } from '../common/version';

export interface StreamCredentials { ca: Buffer; keyPem: string; certPem: string }

export interface StreamEnd {
  /** A Welcome was received: the keeper accepted the stream. */
  welcomed: boolean;
  durationMs: number;
  reason: string;
  goodbye?: GoodbyeReason;
  /** gRPC status code of the end, when it was an error. */
  code?: grpc.status;
  /** The keeper was at its accept rate: it asks the soul to come back after this many ms (agent/busy.ts). */
  retryAfterMs?: number;
}

export interface HoldOptions {
  endpoint: Endpoint;
  creds: StreamCredentials;
  soulprint: () => Soulprint;
  handler: StepHandler;
  log: Logger;
  factsIntervalMs: number;
  signal: AbortSignal;
  /** Renews the certificate on this stream when it is due. */
  rotation?: Rotation;
  onWelcome?: (w: { kid: string; epoch: number; sessionId: string; endpoint: string }) => void;
}

export function holdStream(o: HoldOptions): Promise<StreamEnd> {
  const where = `${o.endpoint.host}:${o.endpoint.event_stream_port}`;
  const started = Date.now();
  const Client = eventStreamService();
  const client = new Client(where, grpc.credentials.createSsl(o.creds.ca, Buffer.from(o.creds.keyPem), Buffer.from(o.creds.certPem)), {
    // Each soul identity needs its own connection (its own client certificate).
    'grpc.use_local_subchannel_pool': 1,
    'grpc.keepalive_time_ms': 30_000,
    'grpc.keepalive_timeout_ms': 10_000,
  });
  const call = (client as any).Connect() as grpc.ClientDuplexStream<OutgoingSoulMessage, ReceivedKeeperMessage>;
  const steps = new Map<string, AbortController>();
  let welcomed = false;
  let goodbye: GoodbyeReason | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let factsTimer: NodeJS.Timeout | undefined;
  let seq = 0;
  let sent = o.soulprint();

  const send = (m: OutgoingSoulMessage) => { if (!call.writableEnded && !call.destroyed) call.write(m); };
  const onAbort = () => call.cancel();
  o.signal.addEventListener('abort', onAbort, { once: true });

  const runStep = async (r: StepRequestMsg) => {
    const ac = new AbortController();
    steps.set(r.request_id, ac);
    const startedAt = Date.now();
    let params: unknown;
    let answer: StepReply;
    try {
      params = JSON.parse(r.params_json || '{}');
      answer = await o.handler.handle(
        { requestId: r.request_id, applyId: r.apply_id, stepIndex: r.step_index, module: r.module, params, dryRun: r.dry_run, showContent: r.show_content === true },
        { signal: ac.signal, progress: (message) => send({ step_progress: { request_id: r.request_id, message } }) },
      );
    } catch (err) {
      answer = { changed: false, ok: false, replayed: false, output: `step failed on the soul: ${(err as Error).message}` };
    } finally {
      steps.delete(r.request_id);
    }
    send({ step_result: {
      request_id: r.request_id, apply_id: r.apply_id, step_index: r.step_index, changed: answer.changed, ok: answer.ok,
      output: answer.output, started_at_ms: startedAt, finished_at_ms: Date.now(), replayed: answer.replayed,
      diff_json: answer.diff ? JSON.stringify(answer.diff) : '',
    } });
  };

  return new Promise<StreamEnd>((resolve) => {
    let finished = false;
    const finish = (reason: string, code?: grpc.status, retryAfterMs?: number) => {
      if (finished) return;
      finished = true;
      clearInterval(heartbeat);
      clearInterval(factsTimer);
      o.rotation?.stop();
      o.signal.removeEventListener('abort', onAbort);
      for (const ac of steps.values()) ac.abort();
      call.cancel();
      client.close();
      resolve({ welcomed, durationMs: Date.now() - started, reason, goodbye, code, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
    };

    call.on('data', (m: ReceivedKeeperMessage) => {
      switch (m.msg) {
        case 'welcome': {
          welcomed = true;
          o.onWelcome?.({ kid: m.welcome.kid, epoch: m.welcome.epoch, sessionId: m.welcome.session_id, endpoint: where });
          heartbeat = setInterval(() => send({ heartbeat: { seq: ++seq } }), Math.max(100, m.welcome.heartbeat_interval_ms));
          factsTimer = setInterval(() => {
            const now = o.soulprint();
            if (!sameSoulprint(now, sent)) { sent = now; send({ facts: { soulprint: now } }); }
          }, o.factsIntervalMs);
          o.rotation?.start(send);
          return;
        }
        case 'step_request': void runStep(m.step_request); return;
        case 'cancel': steps.get(m.cancel.request_id)?.abort(); return;
        case 'goodbye': goodbye = m.goodbye.reason; return;
        case 'certificate_renewed': o.rotation?.onRenewed(m.certificate_renewed); return;
        case 'renewal_refused': o.rotation?.onRefused(m.renewal_refused); return;
        default: return;
      }
    });
    call.on('error', (err: grpc.ServiceError) => finish(err.details || err.message, err.code, busyRetryAfterMs(err.code, err.metadata)));
    call.on('end', () => finish(goodbye ? `keeper said goodbye: ${goodbye}` : 'the keeper ended the stream'));
    send({ hello: { soulprint: sent, soul_version: SOUL_VERSION } });
  });
}
