// A swarm soul that stays: it holds its stream and, when the stream ends, reconnects the way
// `soul run` does (agent/run.ts): goodbye{shutdown} -> within 0.5 s; a keeper at its accept rate ->
// the retry-after it named, jittered (agent/busy.ts); anything else -> the agent's exponential,
// jittered backoff (agent/backoff.ts), reset after a session of 10 s. It never gives up.
import * as grpc from '@grpc/grpc-js';
import { Backoff } from '../../agent/backoff';
import { busyDelay, busyRetryAfterMs } from '../../agent/busy';
import { eventStreamService } from '../../proto/load';
import type { OutgoingSoulMessage, ReceivedKeeperMessage, Soulprint } from '../../proto/types';

const STABLE_MS = 10_000;

function soulprint(sid: string): Soulprint {
  return { fqdn: sid, hostname: sid, os_family: 'debian', os_name: 'Debian', os_release: '12', architecture: 'x86_64',
    cpu_count: 1, memory_bytes: 1 << 30, addresses: [], soul_version: 'storm' };
}

export class StormSoul {
  /** Welcomes received, busy answers (RESOURCE_EXHAUSTED with retry-after), other failed attempts. */
  welcomes = 0;
  busy = 0;
  failed = 0;
  lastWelcomeAt = 0;
  private stopped = false;
  private client: grpc.Client | undefined;
  private call: grpc.ClientDuplexStream<OutgoingSoulMessage, ReceivedKeeperMessage> | undefined;
  private hb: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  private readonly backoff = new Backoff();
  private firstWelcome: (() => void) | undefined;

  constructor(readonly sid: string, private readonly target: string, private readonly creds: grpc.ChannelCredentials) {}

  /** Starts holding; resolves at the first Welcome. */
  start(): Promise<void> {
    return new Promise((resolve) => { this.firstWelcome = resolve; this.attempt(); });
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
    clearInterval(this.hb);
    this.call?.cancel();
    this.client?.close();
  }

  private attempt(): void {
    if (this.stopped) return;
    const started = performance.now();
    let welcomed = false;
    let goodbye: string | undefined;
    const client = new (eventStreamService())(this.target, this.creds, { 'grpc.use_local_subchannel_pool': 1 });
    const call = (client as any).Connect() as grpc.ClientDuplexStream<OutgoingSoulMessage, ReceivedKeeperMessage>;
    this.client = client;
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
    call.on('error', () => undefined); // the status below says how it ended
    call.on('status', (s: grpc.StatusObject) => {
      clearInterval(this.hb);
      call.cancel();
      client.close();
      if (this.stopped) return;
      let delay: number;
      if (welcomed) {
        if (performance.now() - started >= STABLE_MS) this.backoff.reset();
        delay = goodbye === 'shutdown' ? Math.round(Math.random() * 500) : this.backoff.next();
      } else {
        const hint = busyRetryAfterMs(s.code, Object.fromEntries(Object.entries(s.metadata.getMap()).map(([k, v]) => [k, String(v)])));
        if (hint !== undefined) { this.busy++; delay = busyDelay(hint); } else { this.failed++; delay = this.backoff.next(); }
      }
      this.retry = setTimeout(() => this.attempt(), delay);
    });
    call.write({ hello: { soulprint: soulprint(this.sid), soul_version: 'storm' } });
  }
}
