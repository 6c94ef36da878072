// The soul's gRPC stream against peers that do not behave: a keeper host that went dark accepts
// nothing and answers nothing, and the call must end so the soul can try its next endpoint.
import assert from 'node:assert/strict';
import net from 'node:net';
import { EVENT_STREAM_CONNECT } from '../proto/codec';
import { GrpcStatus, GrpcStream, type GrpcError } from './grpc-stream';

describe('agent/grpc-stream: a peer that never answers', () => {
  let server: net.Server;
  const sockets: net.Socket[] = [];
  before(async () => {
    // Takes the TCP connection and then says nothing: no TLS handshake ever completes (as a host
    // behind a dropped route, with the kernel's connect timeout out of the picture).
    server = net.createServer((s) => sockets.push(s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  });

  it('ends UNAVAILABLE naming the endpoint once the connect timeout passes, so the next endpoint is tried', async () => {
    const port = (server.address() as net.AddressInfo).port;
    const call = new GrpcStream(
      {
        target: `127.0.0.1:${port}`,
        ca: Buffer.alloc(0),
        userAgent: 'test',
        keepaliveMs: 60_000,
        keepaliveTimeoutMs: 60_000,
        connectTimeoutMs: 200,
      },
      EVENT_STREAM_CONNECT,
    );
    const err = await new Promise<GrpcError>((resolve) => call.on('error', resolve));
    assert.equal(err.code, GrpcStatus.UNAVAILABLE);
    assert.match(err.details, new RegExp(`no connection to 127\\.0\\.0\\.1:${port} within 200 ms`));
  });
});
