// The soul's gRPC client (agent/grpc-stream.ts, gRPC over node:http2: the stream and soul init's Enroll) against a grpc-js server
// with the keeper's own EventStream and Bootstrap definitions, over TLS (mutual for the stream): messages both ways decode as the
// keeper's proto-loader side has them, a refusal's status and `retry-after` arrive as the keeper
// sent them, a keeper that goes away ends the call UNAVAILABLE, and a keeper that is silent (the
// connection open, nothing answering) is found out by the keepalive rather than waited on forever.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { GrpcStatus, GrpcStream, unaryCall, type GrpcError } from '../../agent/grpc-stream';
import { BOOTSTRAP_ENROLL, EVENT_STREAM_CONNECT } from '../../proto/codec';
import { bootstrapService, eventStreamService } from '../../proto/load';
import type { OutgoingSoulMessage, ReceivedKeeperMessage } from '../../proto/types';
import { tempDir } from '../runs/keeper';
import { openssl } from './harness';

interface Pki {
  ca: Buffer;
  serverKey: Buffer;
  serverCert: Buffer;
  clientKey: string;
  clientCert: string;
}

async function pki(dir: string): Promise<Pki> {
  const f = (n: string) => path.join(dir, n);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await openssl([
    'req',
    '-x509',
    ...ec,
    '-subj',
    '/CN=stream test root',
    '-days',
    '1',
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.pem'),
  ]);
  for (const [name, cn, ext] of [
    ['server', 'localhost', 'subjectAltName=DNS:localhost'],
    ['client', 'stream-test.keeper.test', 'extendedKeyUsage=clientAuth'],
  ] as const) {
    await openssl(['req', ...ec, '-subj', `/CN=${cn}`, '-keyout', f(`${name}.key`), '-out', f(`${name}.csr`)]);
    fs.writeFileSync(f(`${name}.ext`), `${ext}\n`);
    await openssl([
      'x509',
      '-req',
      '-in',
      f(`${name}.csr`),
      '-CA',
      f('ca.pem'),
      '-CAkey',
      f('ca.key'),
      '-CAcreateserial',
      '-days',
      '1',
      '-extfile',
      f(`${name}.ext`),
      '-out',
      f(`${name}.pem`),
    ]);
  }
  const read = (n: string) => fs.readFileSync(f(n));
  return {
    ca: read('ca.pem'),
    serverKey: read('server.key'),
    serverCert: read('server.pem'),
    clientKey: read('client.key').toString(),
    clientCert: read('client.pem').toString(),
  };
}

type Call = grpc.ServerDuplexStream<any, any>;

async function serve(p: Pki, onCall: (call: Call) => void): Promise<{ server: grpc.Server; port: number }> {
  const server = new grpc.Server();
  server.addService(eventStreamService().service, { Connect: onCall });
  return bind(
    server,
    grpc.ServerCredentials.createSsl(p.ca, [{ private_key: p.serverKey, cert_chain: p.serverCert }], true),
  );
}

/** The keeper's bootstrap listener: server-only TLS, the Bootstrap service answered by `enroll`. */
async function serveBootstrap(
  p: Pki,
  enroll: grpc.handleUnaryCall<any, any>,
): Promise<{ server: grpc.Server; port: number }> {
  const server = new grpc.Server();
  server.addService(bootstrapService().service, { Enroll: enroll });
  return bind(
    server,
    grpc.ServerCredentials.createSsl(null, [{ private_key: p.serverKey, cert_chain: p.serverCert }], false),
  );
}

async function bind(
  server: grpc.Server,
  creds: grpc.ServerCredentials,
): Promise<{ server: grpc.Server; port: number }> {
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', creds, (err, n) => (err ? reject(err) : resolve(n))),
  );
  return { server, port };
}

function open(p: Pki, port: number, keepalive = { keepaliveMs: 30_000, keepaliveTimeoutMs: 10_000 }) {
  return new GrpcStream(
    {
      target: `localhost:${port}`,
      ca: p.ca,
      keyPem: p.clientKey,
      certPem: p.clientCert,
      userAgent: 'soul/test',
      ...keepalive,
    },
    EVENT_STREAM_CONNECT,
  );
}

/** How the call ends: the messages it received, then `end` or the error. */
function outcome(
  call: GrpcStream<OutgoingSoulMessage, ReceivedKeeperMessage>,
): Promise<{ got: ReceivedKeeperMessage[]; err?: GrpcError; ms: number }> {
  const t0 = Date.now();
  const got: ReceivedKeeperMessage[] = [];
  call.on('data', (m: ReceivedKeeperMessage) => got.push(m));
  return new Promise((resolve) => {
    call.on('end', () => resolve({ got, ms: Date.now() - t0 }));
    call.on('error', (err: GrpcError) => resolve({ got, err, ms: Date.now() - t0 }));
  });
}

describe("the soul's gRPC client (over node:http2) against a grpc-js keeper", function () {
  this.timeout(30_000);
  const dir = tempDir('grpc-stream-');
  let p: Pki;
  const servers: grpc.Server[] = [];
  before(async () => {
    p = await pki(dir);
  });
  after(() => {
    for (const s of servers) s.forceShutdown();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("sends and receives the contract's messages as the keeper encodes them, and ends with the keeper's OK", async () => {
    const seen: any[] = [];
    const { server, port } = await serve(p, (call) => {
      call.on('data', (m: any) => {
        seen.push(m);
        if (m.msg === 'hello') {
          call.write({ welcome: { session_id: 's-1', epoch: 7, heartbeat_interval_ms: 1170, kid: 'k1' } });
          call.write({
            step_request: {
              request_id: 'r-1',
              apply_id: 'a-1',
              step_index: 2,
              module: 'core.file.present',
              params_json: '{"path":"/x"}',
              dry_run: true,
              show_content: false,
            },
          });
        }
        if (m.msg === 'step_result') {
          call.write({ goodbye: { reason: 'shutdown' } });
          call.end();
        }
      });
    });
    servers.push(server);
    const call = open(p, port);
    const done = outcome(call);
    call.write({
      hello: {
        soulprint: {
          fqdn: 'stream-test.keeper.test',
          hostname: 'stream-test',
          os_family: 'debian',
          os_name: 'Debian',
          os_release: '12',
          architecture: 'x86_64',
          cpu_count: 2,
          memory_bytes: 25_000_000_000,
          addresses: ['10.0.0.5'],
          soul_version: '0.1.0',
        },
        soul_version: '0.1.0',
      },
    });
    call.on('data', (m: ReceivedKeeperMessage) => {
      if (m.msg === 'step_request')
        call.write({
          step_result: {
            request_id: m.step_request.request_id,
            apply_id: 'a-1',
            step_index: 2,
            changed: true,
            ok: true,
            output: 'created',
            started_at_ms: 1_790_000_000_000,
            finished_at_ms: 1_790_000_000_025,
            replayed: false,
            diff_json: '',
            files: [],
          },
        });
    });
    const r = await done;
    assert.equal(r.err, undefined, r.err?.message);
    assert.deepEqual(
      r.got.map((m) => m.msg),
      ['welcome', 'step_request', 'goodbye'],
    );
    assert.deepEqual(r.got[0], {
      msg: 'welcome',
      welcome: { session_id: 's-1', epoch: 7, heartbeat_interval_ms: 1170, kid: 'k1' },
    });
    assert.equal((r.got[1] as any).step_request.params_json, '{"path":"/x"}');
    assert.equal((r.got[1] as any).step_request.dry_run, true);
    assert.equal((r.got[2] as any).goodbye.reason, 'shutdown');
    assert.deepEqual(
      seen.map((m) => m.msg),
      ['hello', 'step_result'],
    );
    assert.equal(seen[0].hello.soulprint.memory_bytes, 25_000_000_000, 'a uint64 beyond 2^32 arrives whole');
    assert.deepEqual(seen[0].hello.soulprint.addresses, ['10.0.0.5']);
    assert.equal(seen[1].step_result.finished_at_ms, 1_790_000_000_025);
  });

  it('hands over a refusal as the keeper sent it: the code, the message and retry-after', async () => {
    const { server, port } = await serve(p, (call) => {
      const metadata = new grpc.Metadata();
      metadata.set('retry-after', '1.5');
      call.emit('error', {
        code: grpc.status.RESOURCE_EXHAUSTED,
        details: 'accept rate reached; retry in 1.5s (slot kept)',
        metadata,
      });
    });
    servers.push(server);
    const r = await outcome(open(p, port));
    assert.equal(r.err?.code, GrpcStatus.RESOURCE_EXHAUSTED);
    assert.equal(r.err?.details, 'accept rate reached; retry in 1.5s (slot kept)');
    assert.equal(r.err?.metadata['retry-after'], '1.5');
  });

  it('ends UNAVAILABLE when the keeper goes away mid-stream, and when nothing listens', async () => {
    const { server, port } = await serve(p, (call) => {
      call.write({ welcome: { session_id: 's', epoch: 1, heartbeat_interval_ms: 1000, kid: 'k' } });
    });
    const call = open(p, port);
    const done = outcome(call);
    call.on('data', () => server.forceShutdown());
    const r = await done;
    assert.deepEqual(
      r.got.map((m) => m.msg),
      ['welcome'],
    );
    assert.equal(r.err?.code, GrpcStatus.UNAVAILABLE, r.err?.message);

    const refused = await outcome(open(p, port));
    assert.equal(refused.err?.code, GrpcStatus.UNAVAILABLE);
    assert.match(refused.err!.details, /ECONNREFUSED/);
  });

  it('refuses a keeper whose certificate is not from the configured root', async () => {
    const otherDir = path.join(dir, 'other');
    fs.mkdirSync(otherDir);
    const other = await pki(otherDir);
    const { server, port } = await serve(other, () => undefined);
    servers.push(server);
    const r = await outcome(open(p, port));
    assert.equal(r.err?.code, GrpcStatus.UNAVAILABLE);
    assert.match(r.err!.details, /certificate/i);
  });

  it("makes soul init's one Enroll call without a client certificate: the answer as the keeper encodes it, a refusal's code, a deadline", async () => {
    const seen: any[] = [];
    const { server, port } = await serveBootstrap(p, (call, callback) => {
      seen.push(call.request);
      if (call.request.token === 'spent')
        return callback({ code: grpc.status.UNAUTHENTICATED, details: 'invalid or expired bootstrap token' });
      if (call.request.token === 'slow') return; // never answers
      callback(null, {
        sid: call.request.sid,
        certificate_pem: 'CERT',
        chain_pem: ['ISSUER', 'ROOT'],
        serial: '7f:01',
        not_after_ms: 1_790_000_000_000,
      });
    });
    servers.push(server);
    const target = { target: `localhost:${port}`, ca: p.ca, userAgent: 'soul/test' };
    const req = {
      token: 'tok-1',
      sid: 'stream-test.keeper.test',
      csr_pem: '-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n',
    };
    const res = await unaryCall(target, BOOTSTRAP_ENROLL, req, 5000);
    assert.deepEqual(res, {
      sid: 'stream-test.keeper.test',
      certificate_pem: 'CERT',
      chain_pem: ['ISSUER', 'ROOT'],
      serial: '7f:01',
      not_after_ms: 1_790_000_000_000,
    });
    assert.deepEqual(seen[0], req, 'the keeper reads the request the soul wrote');

    const refused = await unaryCall(target, BOOTSTRAP_ENROLL, { ...req, token: 'spent' }, 5000).then(
      () => undefined,
      (e: GrpcError) => e,
    );
    assert.equal(refused?.code, GrpcStatus.UNAUTHENTICATED);
    assert.equal(refused?.details, 'invalid or expired bootstrap token');

    const t0 = Date.now();
    const late = await unaryCall(target, BOOTSTRAP_ENROLL, { ...req, token: 'slow' }, 400).then(
      () => undefined,
      (e: GrpcError) => e,
    );
    assert.equal(late?.code, GrpcStatus.DEADLINE_EXCEEDED);
    assert.match(late!.details, /no answer within 400 ms/);
    assert.ok(Date.now() - t0 < 4000, 'the deadline ends the call rather than waiting on the keeper');
  });

  it('finds out a silent keeper with the keepalive ping instead of waiting on it', async () => {
    // TLS completes, HTTP/2 is offered, and then nothing: no settings, no ping answers.
    const silent = tls.createServer({ key: p.serverKey, cert: p.serverCert, ALPNProtocols: ['h2'] }, () => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as { port: number }).port;
      const r = await outcome(open(p, port, { keepaliveMs: 300, keepaliveTimeoutMs: 300 }));
      assert.equal(r.err?.code, GrpcStatus.UNAVAILABLE);
      assert.match(r.err!.details, /no answer to a keepalive ping within 300 ms/);
    } finally {
      silent.close();
    }
  });
});
