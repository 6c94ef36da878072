// A swarm soul that stays: it holds its stream and, when the stream ends, reconnects the way
// `soul run` does (agent/run.ts): goodbye{shutdown} -> within 0.5 s; a keeper at its accept rate ->
// the retry-after it named, jittered (agent/busy.ts); anything else -> the agent's exponential,
// jittered backoff (agent/backoff.ts), reset after a session of 10 s. It never gives up. It speaks
// through the soul's own stream client (agent/grpc-stream.ts), as `soul run` does.
import { Backoff } from '../../agent/backoff';
import { busyDelay, busyRetryAfterMs } from '../../agent/busy';
import { GrpcStream, type GrpcError } from '../../agent/grpc-stream';
import { EVENT_STREAM_CONNECT } from '../../proto/codec';
import type { OutgoingSoulMessage, ReceivedKeeperMessage, Soulprint } from '../../proto/types';

/** What a storm soul connects with: the keeper's CA and its own key and certificate (PEM). */
export interface StormCredentials {
  ca: Buffer;
  keyPem: string;
  certPem: string;
}

const STABLE_MS = 10_000;

function soulprint(sid: string): Soulprint {
  return {
    fqdn: sid,
    hostname: sid,
    os_family: 'debian',
    os_name: 'Debian',
    os_release: '12',
    architecture: 'x86_64',
    cpu_count: 1,
    memory_bytes: 1 << 30,
    addresses: [],
    soul_version: 'storm',
  };
}

export class StormSoul {
  /** Welcomes received, busy answers (RESOURCE_EXHAUSTED with retry-after), other failed attempts. */
  welcomes = 0;
  busy = 0;
  failed = 0;
  lastWelcomeAt = 0;
  private stopped = false;
  private call: GrpcStream<OutgoingSoulMessage, ReceivedKeeperMessage> | undefined;
  private hb: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  private readonly backoff = new Backoff();
  private firstWelcome: (() => void) | undefined;

  constructor(
    readonly sid: string,
    private readonly target: string,
    private readonly creds: StormCredentials,
  ) {}

  /** Starts holding; resolves at the first Welcome. */
  start(): Promise<void> {
    return new Promise((resolve) => {
      this.firstWelcome = resolve;
      this.attempt();
    });
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
    clearInterval(this.hb);
    this.call?.cancel();
  }

  private attempt(): void {
    if (this.stopped) return;
    const started = performance.now();
    let welcomed = false;
    let goodbye: string | undefined;
    const call = new GrpcStream(
      {
        target: this.target,
        ...this.creds,
        userAgent: 'soul/storm',
        keepaliveMs: 30_000,
        keepaliveTimeoutMs: 10_000,
      },
      EVENT_STREAM_CONNECT,
    );
    this.call = call;
    call.on('data', (m: ReceivedKeeperMessage) => {
      if (m.msg === 'welcome') {
        welcomed = true;
        this.welcomes++;
        this.lastWelcomeAt = performance.now();
        let seq = 0;
        this.hb = setInterval(() => call.write({ heartbeat: { seq: ++seq } }), m.welcome.heartbeat_interval_ms);
        this.firstWelcome?.();
        this.firstWelcome = undefined;
      } else if (m.msg === 'goodbye') {
        goodbye = m.goodbye.reason;
      }
    });
    const ended = (s: { code: number; metadata: Record<string, string> }) => {
      clearInterval(this.hb);
      if (this.stopped) return;
      let delay: number;
      if (welcomed) {
        if (performance.now() - started >= STABLE_MS) this.backoff.reset();
        delay = goodbye === 'shutdown' ? Math.round(Math.random() * 500) : this.backoff.next();
      } else {
        const hint = busyRetryAfterMs(s.code, s.metadata);
        if (hint !== undefined) {
          this.busy++;
          delay = busyDelay(hint);
        } else {
          this.failed++;
          delay = this.backoff.next();
        }
      }
      this.retry = setTimeout(() => this.attempt(), delay);
    };
    call.on('error', (err: GrpcError) => ended(err));
    call.on('end', () => ended({ code: 0, metadata: {} }));
    call.write({ hello: { soulprint: soulprint(this.sid), soul_version: 'storm' } });
  }
}
