// A gRPC server as a keeper Component: binds `<host>:<port>` with the given credentials and, on
// stop, refuses new calls, lets `drain` end the live ones, then forces what is left after a grace.
import * as grpc from '@grpc/grpc-js';
import type { Component } from '../platform/component';

export function grpcComponent(
  name: string,
  addr: string,
  server: grpc.Server,
  credentials: () => grpc.ServerCredentials,
  drain: () => Promise<void> = async () => undefined,
): Component {
  return {
    name,
    start: () =>
      new Promise<void>((resolve, reject) => {
        server.bindAsync(addr, credentials(), (err) => {
          if (err) reject(new Error(`cannot listen on ${addr} for ${name}: ${err.message}`));
          else resolve();
        });
      }),
    async stop() {
      const done = new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      await drain();
      const grace = new Promise<void>((resolve) => setTimeout(resolve, 2000).unref());
      await Promise.race([done, grace]);
      server.forceShutdown();
    },
  };
}

/** Server options for listeners that face many hosts: keepalive to find dead peers, bounded messages. */
export const SERVER_OPTIONS: grpc.ServerOptions = {
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 10_000,
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.http2.min_ping_interval_without_data_ms': 10_000,
  'grpc.max_receive_message_length': 4 * 1024 * 1024,
  // Channelz (grpc-js's introspection service, which the keeper never serves) registers every
  // connection and call with trace buffers and counters; off, that is memory not kept per soul.
  'grpc.enable_channelz': 0,
};
