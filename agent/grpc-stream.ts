// The soul's gRPC client for its one stream (and `soul init`'s one Enroll call), over node:http2
// rather than grpc-js. A soul holds one bidirectional stream for its whole life; grpc-js (channels,
// resolvers, load balancing, retries, interceptors) and proto-loader were a third of `soul run`'s start-up and most of the CPU of an
// idle soul's heartbeat (docs/performance.md). This speaks the gRPC-over-HTTP/2 protocol for that
// one call: a POST with `content-type: application/grpc` and `te: trailers`, length-prefixed
// messages both ways (no compression is offered, so none may come), and the status in the trailers
// (or in the headers of a trailers-only answer). The keeper serves it with grpc-js, unchanged.
import http2 from 'node:http2';
import { EventEmitter } from 'node:events';
import type { Codec } from '../proto/codec';

/** gRPC status codes (https://grpc.github.io/grpc/core/md_doc_statuscodes.html), the ones the soul names. */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  UNAUTHENTICATED: 16,
} as const;

/** How the call ended when it was not OK: the status, its message, and the trailers' other fields. */
export interface GrpcError extends Error {
  code: number;
  details: string;
  metadata: Record<string, string>;
}

export interface GrpcStreamOptions {
  /** host:port of the keeper's listener. */
  target: string;
  ca: Buffer;
  /** The soul's identity, for mutual TLS (the event stream); absent for the bootstrap listener. */
  keyPem?: string;
  certPem?: string;
  userAgent: string;
  /** An HTTP/2 PING this often; no answer within `keepaliveTimeoutMs` ends the call UNAVAILABLE. */
  keepaliveMs: number;
  keepaliveTimeoutMs: number;
  /**
   * The connection (TCP and TLS) must be up within this long, or the call ends UNAVAILABLE. A keeper
   * whose process died refuses at once, but one whose host is gone answers nothing, and the kernel's
   * own connect timeout is about two minutes: without this, a soul whose preferred keeper's host
   * went dark would wait that long each round before trying the next endpoint. Unset: no limit.
   */
  connectTimeoutMs?: number;
}

/**
 * One call. Events: `data` (a decoded message), then exactly one of `end` (status OK) or `error`
 * (a GrpcError: the keeper's status, or UNAVAILABLE when the connection failed or broke, CANCELLED
 * after cancel()).
 */
export class GrpcStream<Out, In> extends EventEmitter {
  private readonly session: http2.ClientHttp2Session;
  private readonly stream: http2.ClientHttp2Stream;
  private pending: Buffer = Buffer.alloc(0);
  private headers: http2.IncomingHttpHeaders | undefined;
  private ended = false;
  private keepalive: NodeJS.Timeout | undefined;
  private pingDeadline: NodeJS.Timeout | undefined;
  private connectDeadline: NodeJS.Timeout | undefined;

  constructor(
    private readonly o: GrpcStreamOptions,
    private readonly method: Codec<Out, In>,
  ) {
    super();
    const identity = o.keyPem !== undefined && o.certPem !== undefined ? { key: o.keyPem, cert: o.certPem } : {};
    this.session = http2.connect(`https://${o.target}`, { ca: o.ca, ...identity, ALPNProtocols: ['h2'] });
    this.session.on('error', (err: Error) =>
      this.fail(GrpcStatus.UNAVAILABLE, `connection to ${o.target} failed: ${err.message}`),
    );
    this.session.on('close', () => this.fail(GrpcStatus.UNAVAILABLE, `the connection to ${o.target} closed`));
    this.stream = this.session.request(
      {
        ':method': 'POST',
        ':path': method.path,
        'content-type': 'application/grpc',
        te: 'trailers',
        'user-agent': o.userAgent,
        'grpc-accept-encoding': 'identity',
      },
      { endStream: false },
    );
    this.stream.on('response', (h) => {
      this.headers = h;
      if (h['grpc-status'] !== undefined) this.status(h);
    });
    this.stream.on('data', (chunk: Buffer) => this.receive(chunk));
    this.stream.on('trailers', (t) => this.status(t));
    this.stream.on('error', (err: Error) =>
      this.fail(GrpcStatus.UNAVAILABLE, `the stream to ${o.target} failed: ${err.message}`),
    );
    this.stream.on('close', () => this.closed());
    if (o.connectTimeoutMs !== undefined)
      this.connectDeadline = setTimeout(
        () => this.fail(GrpcStatus.UNAVAILABLE, `no connection to ${o.target} within ${o.connectTimeoutMs} ms`),
        o.connectTimeoutMs,
      );
    this.session.once('connect', () => {
      clearTimeout(this.connectDeadline);
      this.ping();
    });
  }

  /** Sends one message (dropped once the call has ended, as grpc-js's write after end would be). */
  write(message: Out): void {
    if (this.ended || this.stream.destroyed) return;
    const body = this.method.encode(message);
    const frame = Buffer.allocUnsafe(5 + body.length);
    frame[0] = 0; // not compressed
    frame.writeUInt32BE(body.length, 1);
    frame.set(body, 5);
    this.stream.write(frame);
  }

  /** Half-closes: this side sends nothing more (a unary call's request is complete); the answer still comes. */
  end(): void {
    if (this.ended || this.stream.destroyed) return;
    this.stream.end();
  }

  /** Ends the call from this side: `error` CANCELLED (or the code given), the connection closed. */
  cancel(code: number = GrpcStatus.CANCELLED, details = 'cancelled by the soul'): void {
    this.fail(code, details);
  }

  private receive(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    while (this.pending.length >= 5) {
      const compressed = this.pending[0] !== 0;
      const length = this.pending.readUInt32BE(1);
      if (this.pending.length < 5 + length) return;
      const body = this.pending.subarray(5, 5 + length);
      this.pending = this.pending.subarray(5 + length);
      if (compressed)
        return this.fail(
          GrpcStatus.INTERNAL,
          'the keeper sent a compressed message, which the soul did not offer to read',
        );
      let message: In;
      try {
        message = this.method.decode(body);
      } catch (err) {
        return this.fail(
          GrpcStatus.INTERNAL,
          `a message from the keeper could not be decoded: ${(err as Error).message}`,
        );
      }
      if (this.ended) return;
      this.emit('data', message);
    }
  }

  private status(fields: http2.IncomingHttpHeaders): void {
    const code = Number(fields['grpc-status']);
    const details = decodeMessage(String(fields['grpc-message'] ?? ''));
    if (code === GrpcStatus.OK) return this.finish(() => this.emit('end'));
    const metadata: Record<string, string> = {};
    for (const [k, v] of Object.entries(fields)) if (!k.startsWith(':') && typeof v === 'string') metadata[k] = v;
    this.fail(
      Number.isInteger(code) ? code : GrpcStatus.UNKNOWN,
      details || `status ${String(fields['grpc-status'])}`,
      metadata,
    );
  }

  private closed(): void {
    if (this.ended) return;
    const http = Number(this.headers?.[':status'] ?? 0);
    if (this.headers && http !== 200)
      return this.fail(
        http === 503 || http === 502 || http === 504 ? GrpcStatus.UNAVAILABLE : GrpcStatus.UNKNOWN,
        `the keeper answered HTTP ${http}`,
      );
    this.fail(
      GrpcStatus.UNAVAILABLE,
      `the stream to ${this.o.target} closed without a status (RST_STREAM ${this.stream.rstCode ?? 'none'})`,
    );
  }

  private ping(): void {
    this.keepalive = setTimeout(() => {
      if (this.ended) return;
      this.pingDeadline = setTimeout(
        () => this.fail(GrpcStatus.UNAVAILABLE, `no answer to a keepalive ping within ${this.o.keepaliveTimeoutMs} ms`),
        this.o.keepaliveTimeoutMs,
      );
      this.session.ping((err) => {
        clearTimeout(this.pingDeadline);
        if (!err) this.ping();
      });
    }, this.o.keepaliveMs);
    this.keepalive.unref();
  }

  private fail(code: number, details: string, metadata: Record<string, string> = {}): void {
    this.finish(() => this.emit('error', grpcError(code, details, metadata)));
  }

  /** The one ending: emit it, then release the stream and the connection. */
  private finish(emit: () => void): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.connectDeadline);
    clearTimeout(this.keepalive);
    clearTimeout(this.pingDeadline);
    emit();
    if (!this.stream.destroyed) this.stream.close(http2.constants.NGHTTP2_CANCEL);
    this.session.close();
    // A connection that cannot close gracefully (a silent peer) is dropped.
    setTimeout(() => {
      if (!this.session.destroyed) this.session.destroy();
    }, 1000).unref();
  }
}

/**
 * A unary call (`soul init`'s Enroll): one request, one answer, or the GrpcError the call ended with;
 * DEADLINE_EXCEEDED when no answer came within `timeoutMs`, as grpc-js's deadline would.
 */
export function unaryCall<Out, In>(
  o: Omit<GrpcStreamOptions, 'keepaliveMs' | 'keepaliveTimeoutMs'>,
  method: Codec<Out, In>,
  request: Out,
  timeoutMs: number,
): Promise<In> {
  return new Promise<In>((resolve, reject) => {
    const call = new GrpcStream({ ...o, keepaliveMs: timeoutMs, keepaliveTimeoutMs: timeoutMs }, method);
    let answer: In | undefined;
    const deadline = setTimeout(
      () => call.cancel(GrpcStatus.DEADLINE_EXCEEDED, `no answer within ${timeoutMs} ms`),
      timeoutMs,
    );
    call.on('data', (m: In) => {
      answer ??= m;
    });
    call.on('end', () => {
      clearTimeout(deadline);
      if (answer !== undefined) resolve(answer);
      else reject(grpcError(GrpcStatus.INTERNAL, 'the keeper ended the call without an answer'));
    });
    call.on('error', (err: GrpcError) => {
      clearTimeout(deadline);
      reject(err);
    });
    call.write(request);
    call.end();
  });
}

function grpcError(code: number, details: string, metadata: Record<string, string> = {}): GrpcError {
  return Object.assign(new Error(`${code} ${details}`), { code, details, metadata });
}

/** grpc-message is percent-encoded (gRPC over HTTP/2); a malformed one is shown as it came. */
function decodeMessage(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
