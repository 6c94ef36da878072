// Hand-driven gRPC clients for tests that must do what a well-behaved soul never does: claim another
// host, answer another stream's requests, ask for extra names in a CSR.
import fs from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { bootstrapService, eventStreamService } from '../../proto/load';
import type {
  EnrollRequest,
  EnrollResponse,
  OutgoingSoulMessage,
  ReceivedKeeperMessage,
  Soulprint,
} from '../../proto/types';
import { stackFile } from '../support/stack-env';

export function caPem(): Buffer {
  return fs.readFileSync(stackFile('tls', 'ca.pem'));
}

export function enroll(addr: string, req: EnrollRequest): Promise<EnrollResponse> {
  const client = new (bootstrapService())(addr.replace('127.0.0.1', 'localhost'), grpc.credentials.createSsl(caPem()));
  return new Promise((resolve, reject) =>
    (client as any).Enroll(req, (err: Error | null, res: EnrollResponse) => {
      client.close();
      if (err) reject(err);
      else resolve(res);
    }),
  );
}

export interface RawStream {
  received: ReceivedKeeperMessage[];
  send(m: OutgoingSoulMessage): void;
  /** Resolves with the first received message matching, or rejects on stream error. */
  next(kind: ReceivedKeeperMessage['msg'], timeoutMs?: number): Promise<ReceivedKeeperMessage>;
  ended: Promise<grpc.ServiceError | null>;
  close(): void;
}

/** Opens EventStream.Connect with the key and certificate of a seed directory. */
export function openStream(addr: string, seed: { key: Buffer; cert: Buffer }): RawStream {
  const client = new (eventStreamService())(
    addr.replace('127.0.0.1', 'localhost'),
    grpc.credentials.createSsl(caPem(), seed.key, seed.cert),
    { 'grpc.use_local_subchannel_pool': 1 },
  );
  const call = (client as any).Connect() as grpc.ClientDuplexStream<OutgoingSoulMessage, ReceivedKeeperMessage>;
  const received: ReceivedKeeperMessage[] = [];
  const waiters: { kind: string; resolve(m: ReceivedKeeperMessage): void; reject(e: Error): void }[] = [];
  let endErr: Error | undefined;
  const ended = new Promise<grpc.ServiceError | null>((resolve) => {
    call.on('error', (e: grpc.ServiceError) => {
      endErr = e;
      waiters.splice(0).forEach((w) => w.reject(e));
      resolve(e);
    });
    call.on('end', () => {
      endErr = new Error('stream ended');
      waiters.splice(0).forEach((w) => w.reject(endErr!));
      resolve(null);
    });
  });
  call.on('data', (m: ReceivedKeeperMessage) => {
    received.push(m);
    const i = waiters.findIndex((w) => w.kind === m.msg);
    if (i >= 0) waiters.splice(i, 1)[0]!.resolve(m);
  });
  return {
    received,
    ended,
    send: (m) => call.write(m),
    next: (kind, timeoutMs = 5000) => {
      const have = received.find((m) => m.msg === kind);
      if (have) return Promise.resolve(have);
      if (endErr) return Promise.reject(endErr);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no ${kind} within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({
          kind,
          resolve: (m) => {
            clearTimeout(t);
            resolve(m);
          },
          reject: (e) => {
            clearTimeout(t);
            reject(e);
          },
        });
      });
    },
    close: () => {
      call.cancel();
      client.close();
    },
  };
}

export function readSeed(seed: string): { key: Buffer; cert: Buffer } {
  return { key: fs.readFileSync(path.join(seed, 'key.pem')), cert: fs.readFileSync(path.join(seed, 'cert.pem')) };
}

export function soulprintFor(fqdn: string): Soulprint {
  return {
    fqdn,
    hostname: fqdn,
    os_family: 'debian',
    os_name: 'Debian',
    os_release: '12',
    architecture: 'x86_64',
    cpu_count: 1,
    memory_bytes: 1024,
    addresses: [],
    soul_version: 'test',
  };
}
