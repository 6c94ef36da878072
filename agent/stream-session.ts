// One attempt at holding the EventStream to one endpoint: Hello with the soulprint, wait for
// Welcome, heartbeat at the keeper's interval, send Facts when they change (or when asked), run step requests
// through the StepHandler (cancellable), and report how the stream ended.
import type { Logger } from '../common/logger';
import { EVENT_STREAM_CONNECT } from '../proto/codec';
import type {
  GoodbyeReason,
  OutgoingSoulMessage,
  ReceivedKeeperMessage,
  Soulprint,
  StepRequestMsg,
} from '../proto/types';
import { busyRetryAfterMs } from './busy';
import { GrpcStream, type GrpcError } from './grpc-stream';
import type { Endpoint } from './config';
import { sameSoulprint } from './facts';
import type { Rotation } from './rotation';
import type { StepReply, StepHandler } from './steps';
import { VERSION as SOUL_VERSION } from '../common/version';

/** How long a connection to a keeper may take before the soul tries its next endpoint. */
export const CONNECT_TIMEOUT_MS = 10_000;

export interface StreamCredentials {
  ca: Buffer;
  keyPem: string;
  certPem: string;
}

export interface StreamEnd {
  /** A Welcome was received: the keeper accepted the stream. */
  welcomed: boolean;
  durationMs: number;
  reason: string;
  goodbye?: GoodbyeReason;
  /** gRPC status code of the end, when it was an error (agent/grpc-stream.ts GrpcStatus). */
  code?: number;
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
  // Its own connection, with this identity's client certificate.
  const call = new GrpcStream(
    {
      target: where,
      ca: o.creds.ca,
      keyPem: o.creds.keyPem,
      certPem: o.creds.certPem,
      userAgent: `soul/${SOUL_VERSION}`,
      keepaliveMs: 30_000,
      keepaliveTimeoutMs: 10_000,
      // Long enough for a TLS handshake with a keeper busy with a whole fleet arriving; short against
      // the kernel's two minutes for a host that went dark (the next endpoint waits meanwhile).
      connectTimeoutMs: CONNECT_TIMEOUT_MS,
    },
    EVENT_STREAM_CONNECT,
  );
  const steps = new Map<string, AbortController>();
  let welcomed = false;
  let goodbye: GoodbyeReason | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let factsTimer: NodeJS.Timeout | undefined;
  let seq = 0;
  let sent = o.soulprint();

  const send = (m: OutgoingSoulMessage) => call.write(m);
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
        {
          requestId: r.request_id,
          applyId: r.apply_id,
          stepIndex: r.step_index,
          module: r.module,
          params,
          dryRun: r.dry_run,
          showContent: r.show_content === true,
          ...(r.redact_json ? { redact: redactionsOf(r.redact_json) } : {}),
          ...(r.withhold ? { withhold: r.withhold } : {}),
          ...(r.program?.sha256
            ? {
                program: {
                  sha256: r.program.sha256,
                  contentBase64: r.program.content_base64,
                  dryRun: r.program.dry_run,
                  timeoutMs: r.program.timeout_ms,
                  ...(r.program.runtime ? { runtime: r.program.runtime } : {}),
                },
              }
            : {}),
        },
        { signal: ac.signal, progress: (message) => send({ step_progress: { request_id: r.request_id, message } }) },
      );
    } catch (err) {
      answer = {
        changed: false,
        ok: false,
        replayed: false,
        output: `step failed on the soul: ${(err as Error).message}`,
      };
    } finally {
      steps.delete(r.request_id);
    }
    send({
      step_result: {
        request_id: r.request_id,
        apply_id: r.apply_id,
        step_index: r.step_index,
        changed: answer.changed,
        ok: answer.ok,
        output: answer.output,
        started_at_ms: startedAt,
        finished_at_ms: Date.now(),
        replayed: answer.replayed,
        diff_json: answer.diff ? JSON.stringify(answer.diff) : '',
        files: answer.files ?? [],
      },
    });
  };

  return new Promise<StreamEnd>((resolve) => {
    let finished = false;
    const finish = (reason: string, code?: number, retryAfterMs?: number) => {
      if (finished) return;
      finished = true;
      clearInterval(heartbeat);
      clearInterval(factsTimer);
      o.rotation?.stop();
      o.signal.removeEventListener('abort', onAbort);
      for (const ac of steps.values()) ac.abort();
      call.cancel();
      resolve({
        welcomed,
        durationMs: Date.now() - started,
        reason,
        goodbye,
        code,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      });
    };

    call.on('data', (m: ReceivedKeeperMessage) => {
      switch (m.msg) {
        case 'welcome': {
          welcomed = true;
          o.onWelcome?.({
            kid: m.welcome.kid,
            epoch: m.welcome.epoch,
            sessionId: m.welcome.session_id,
            endpoint: where,
          });
          heartbeat = setInterval(
            () => send({ heartbeat: { seq: ++seq } }),
            Math.max(100, m.welcome.heartbeat_interval_ms),
          );
          factsTimer = setInterval(() => {
            const now = o.soulprint();
            if (!sameSoulprint(now, sent)) {
              sent = now;
              send({ facts: { soulprint: now } });
            }
          }, o.factsIntervalMs);
          o.rotation?.start(send);
          return;
        }
        case 'step_request':
          void runStep(m.step_request);
          return;
        case 'cancel':
          steps.get(m.cancel.request_id)?.abort();
          return;
        case 'goodbye':
          goodbye = m.goodbye.reason;
          return;
        case 'certificate_renewed':
          o.rotation?.onRenewed(m.certificate_renewed);
          return;
        case 'renewal_refused':
          o.rotation?.onRefused(m.renewal_refused);
          return;
        case 'refresh_facts':
          // Asked for fresh facts (`souls list --refresh`): collected now and sent even when unchanged,
          // since the keeper waits for this answer.
          sent = o.soulprint();
          send({ facts: { soulprint: sent } });
          return;
        default:
          return;
      }
    });
    call.on('error', (err: GrpcError) =>
      finish(err.details || err.message, err.code, busyRetryAfterMs(err.code, err.metadata)),
    );
    call.on('end', () => finish(goodbye ? `keeper said goodbye: ${goodbye}` : 'the keeper ended the stream'));
    send({ hello: { soulprint: sent, soul_version: SOUL_VERSION } });
  });
}

/** The keeper's list of values to scrub (StepRequest.redact_json); anything malformed is none. */
function redactionsOf(json: string): Array<{ value: string; placeholder: string }> {
  try {
    const v = JSON.parse(json) as unknown;
    if (!Array.isArray(v)) return [];
    return v.filter(
      (x): x is { value: string; placeholder: string } =>
        typeof x?.value === 'string' && typeof x?.placeholder === 'string',
    );
  } catch {
    return [];
  }
}
