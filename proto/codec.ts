// The EventStream's messages as bytes, for the soul's stream client (agent/grpc-stream.ts): the
// contract parsed with protobufjs alone, encoded and decoded exactly as grpc-js's proto-loader does
// on the keeper (fromObject + encode; decode + toObject with the shared LOADER_OPTIONS), without
// loading grpc-js and proto-loader at the soul's start (docs/performance.md).
import path from 'node:path';
import protobuf from 'protobufjs';
import { LOADER_OPTIONS, protoRoot } from './contracts';
import type { OutgoingSoulMessage, ReceivedKeeperMessage } from './types';

export interface SoulStreamCodec {
  /** The gRPC method path of the stream. */
  path: string;
  encode(message: OutgoingSoulMessage): Uint8Array;
  decode(bytes: Uint8Array): ReceivedKeeperMessage;
}

let cached: SoulStreamCodec | undefined;

export function soulStreamCodec(): SoulStreamCodec {
  if (cached) return cached;
  const root = new protobuf.Root();
  const dir = protoRoot();
  // Imports inside the contracts are relative to proto/, as proto-loader's includeDirs has them.
  root.resolvePath = (_origin, target) => (path.isAbsolute(target) ? target : path.join(dir, target));
  root.loadSync('keeper/stream/v1/event_stream.proto', { keepCase: LOADER_OPTIONS.keepCase });
  root.resolveAll();
  const soul = root.lookupType('keeper.stream.v1.SoulMessage');
  const keeper = root.lookupType('keeper.stream.v1.KeeperMessage');
  const { longs, enums, defaults, oneofs } = LOADER_OPTIONS;
  const toObject = { longs, enums, defaults, oneofs } as protobuf.IConversionOptions;
  cached = {
    path: '/keeper.stream.v1.EventStream/Connect',
    encode: (m) => soul.encode(soul.fromObject(m as unknown as Record<string, unknown>)).finish(),
    decode: (bytes) => keeper.toObject(keeper.decode(bytes), toObject) as unknown as ReceivedKeeperMessage,
  };
  return cached;
}
