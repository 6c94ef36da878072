// Fan-out swarm members: like bench/streams' SwarmSoul (own TLS connection, own certificate from
// signSwarmCerts), but answering every step request at once as already satisfied (changed:false),
// so a run measures the keeper and Temporal, not state modules.
import * as grpc from '@grpc/grpc-js';
import { services } from '../../proto/load';
import type { OutgoingSoulMessage, ReceivedKeeperMessage, Soulprint } from '../../proto/types';

function soulprint(sid: string): Soulprint {
  return { fqdn: sid, hostname: sid, os_family: 'debian', os_name: 'Debian', os_release: '12', architecture: 'x86_64',
    cpu_count: 1, memory_bytes: 1 << 30, addresses: [], soul_version: 'fanout-swarm' };
}

export class FanoutSoul {
  steps = 0;
  private client: grpc.Client | undefined;
  private call: grpc.ClientDuplexStream<OutgoingSoulMessage, ReceivedKeeperMessage> | undefined;
  private hb: NodeJS.Timeout | undefined;

  constructor(readonly sid: string, private readonly target: string, private readonly creds: grpc.ChannelCredentials) {}

  /** Resolves at Welcome. */
  connect(timeoutMs = 60_000): Promise<void> {
    this.client = new (services().eventStream)(this.target, this.creds, { 'grpc.use_local_subchannel_pool': 1 });
    const call = (this.client as any).Connect() as grpc.ClientDuplexStream<OutgoingSoulMessage, ReceivedKeeperMessage>;
    this.call = call;
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`${this.sid}: no welcome in ${timeoutMs} ms`)), timeoutMs);
      call.on('data', (m: ReceivedKeeperMessage) => {
        if (m.msg === 'welcome') {
          clearTimeout(t);
          let seq = 0;
          this.hb = setInterval(() => call.write({ heartbeat: { seq: ++seq } }), m.welcome.heartbeat_interval_ms);
          resolve();
        } else if (m.msg === 'step_request') {
          const r = m.step_request;
          const now = Date.now();
          this.steps++;
          call.write({ step_result: {
            request_id: r.request_id, apply_id: r.apply_id, step_index: r.step_index, changed: false, ok: true,
            output: 'already as desired (bench swarm)', started_at_ms: now, finished_at_ms: now, replayed: false,
          } });
        }
      });
      call.on('error', (e: Error) => { clearTimeout(t); reject(e); });
      call.write({ hello: { soulprint: soulprint(this.sid), soul_version: 'fanout-swarm' } });
    });
  }

  close(): void {
    clearInterval(this.hb);
    this.call?.cancel();
    this.client?.close();
  }
}
