// A soul swarm: many EventStream sessions from one process, each on its own TLS connection with its
// own certificate. Certificates are signed straight by the PKI with the stack's root token (one key
// and one CSR, signed once per SID: the soul role takes names from the request, not the CSR), which
// is the fastest way to get thousands of distinct soul identities. Each member speaks through the
// soul's own stream client (agent/grpc-stream.ts), as `soul run` does.
import { createCsr, generateKey, privateKeyPem } from '../../agent/csr';
import { GrpcStream } from '../../agent/grpc-stream';
import type { StepHandler, StepReply } from '../../agent/steps';
import { EVENT_STREAM_CONNECT } from '../../proto/codec';
import type { OutgoingSoulMessage, ReceivedKeeperMessage, Soulprint, StepRequestMsg } from '../../proto/types';
import { stackEnv } from '../../test/support/stack-env';

export interface SoulCert {
  sid: string;
  certPem: string;
}

/** What a swarm member connects with: the keeper's CA and its own key and certificate (PEM). */
export interface SwarmCredentials {
  ca: Buffer;
  keyPem: string;
  certPem: string;
}

export async function signSwarmCerts(sids: string[], concurrency = 16): Promise<{ keyPem: string; certs: SoulCert[] }> {
  const env = stackEnv();
  const key = generateKey();
  const csr = createCsr(key, 'swarm.keeper.test');
  const certs: SoulCert[] = new Array(sids.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < sids.length) {
        const i = next++;
        const res = await fetch(`${env.SECRETSTORE_ADDR}/v1/pki/sign/soul`, {
          method: 'POST',
          headers: { 'X-Vault-Token': env.SECRETSTORE_ROOT_TOKEN, 'Content-Type': 'application/json' },
          body: JSON.stringify({ csr, common_name: sids[i], alt_names: sids[i], ttl: '24h' }),
        });
        if (!res.ok) throw new Error(`pki sign ${sids[i]}: HTTP ${res.status}`);
        certs[i] = {
          sid: sids[i]!,
          certPem: ((await res.json()) as { data: { certificate: string } }).data.certificate,
        };
      }
    }),
  );
  return { keyPem: privateKeyPem(key), certs };
}

/** A swarm member's soulprint: a Debian host named by its SID (so core.pkg.installed picks apt). */
export function swarmSoulprint(sid: string): Soulprint {
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
    soul_version: 'swarm',
  };
}

/**
 * One swarm member: connect, hello, wait for Welcome, heartbeat at the keeper's interval. With
 * `answerSteps` (bench/fanout) it answers every step request at once as already satisfied
 * (changed:false), so a run measures the keeper and Temporal, not state modules. With `handler`
 * (bench/fanout --real-modules) each step request goes to that StepHandler, the interface `soul
 * run` hands its requests to, and its reply is sent back as the real soul's stream session sends it.
 */
export class SwarmSoul {
  /** Step results sent. */
  steps = 0;
  /** performance.now() of the first step request and of the last step result since resetWindow(). */
  firstRequestAt: number | undefined;
  lastResultAt: number | undefined;
  private call: GrpcStream<OutgoingSoulMessage, ReceivedKeeperMessage> | undefined;
  private hb: NodeJS.Timeout | undefined;

  constructor(
    readonly sid: string,
    private readonly target: string,
    private readonly creds: SwarmCredentials,
    private readonly opts: { answerSteps?: boolean; handler?: StepHandler } = {},
  ) {}

  resetWindow(): void {
    this.firstRequestAt = undefined;
    this.lastResultAt = undefined;
  }

  static credentials(ca: Buffer, keyPem: string, certPem: string): SwarmCredentials {
    return { ca, keyPem, certPem };
  }

  /** Resolves at Welcome with the time it took. */
  connect(timeoutMs = 30_000): Promise<number> {
    const t0 = performance.now();
    const call = new GrpcStream(
      {
        target: this.target,
        ...this.creds,
        userAgent: 'soul/swarm',
        keepaliveMs: 30_000,
        keepaliveTimeoutMs: 10_000,
      },
      EVENT_STREAM_CONNECT,
    );
    this.call = call;
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`${this.sid}: no welcome in ${timeoutMs} ms`)), timeoutMs);
      call.on('data', (m: ReceivedKeeperMessage) => {
        if (m.msg === 'welcome') {
          clearTimeout(t);
          let seq = 0;
          this.hb = setInterval(() => call.write({ heartbeat: { seq: ++seq } }), m.welcome.heartbeat_interval_ms);
          resolve(performance.now() - t0);
        } else if (m.msg === 'step_request' && this.opts.handler) {
          this.firstRequestAt ??= performance.now();
          void this.runStep(call, m.step_request, this.opts.handler);
        } else if (m.msg === 'step_request' && this.opts.answerSteps) {
          this.firstRequestAt ??= performance.now();
          const r = m.step_request;
          const now = Date.now();
          this.steps++;
          call.write({
            step_result: {
              request_id: r.request_id,
              apply_id: r.apply_id,
              step_index: r.step_index,
              changed: false,
              ok: true,
              output: 'already as desired (bench swarm)',
              started_at_ms: now,
              finished_at_ms: now,
              replayed: false,
              diff_json: '',
              files: [],
            },
          });
          this.lastResultAt = performance.now();
        }
      });
      call.on('error', (e: Error) => {
        clearTimeout(t);
        reject(e);
      });
      call.write({ hello: { soulprint: swarmSoulprint(this.sid), soul_version: 'swarm' } });
    });
  }

  /**
   * What agent/stream-session.ts does with a step request (its runStep is private to the session):
   * parse the params, hand the step to the handler, answer with its reply or with the failure. No
   * cancellation: the state handler does not pass it on (a module runs to its end, agent/steps.ts).
   */
  private async runStep(
    call: GrpcStream<OutgoingSoulMessage, ReceivedKeeperMessage>,
    r: StepRequestMsg,
    handler: StepHandler,
  ): Promise<void> {
    const startedAt = Date.now();
    const send = (m: OutgoingSoulMessage) => call.write(m); // dropped once the call has ended
    let answer: StepReply;
    try {
      answer = await handler.handle(
        {
          requestId: r.request_id,
          applyId: r.apply_id,
          stepIndex: r.step_index,
          module: r.module,
          params: JSON.parse(r.params_json || '{}'),
          dryRun: r.dry_run,
          showContent: r.show_content === true,
        },
        {
          signal: new AbortController().signal,
          progress: (message) => send({ step_progress: { request_id: r.request_id, message } }),
        },
      );
    } catch (err) {
      answer = {
        changed: false,
        ok: false,
        replayed: false,
        output: `step failed on the soul: ${(err as Error).message}`,
      };
    }
    this.steps++;
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
        files: [],
      },
    });
    this.lastResultAt = performance.now();
  }

  close(): void {
    clearInterval(this.hb);
    this.call?.cancel();
  }
}
