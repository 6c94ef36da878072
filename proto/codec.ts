// The EventStream's messages as bytes, for the soul's stream client (agent/grpc-stream.ts): read and
// written with proto/wire.ts from the field tables of proto/stream-fields.ts, exactly as grpc-js's
// proto-loader does on the keeper (fromObject + encode; decode + toObject with the shared
// LOADER_OPTIONS), without loading grpc-js, proto-loader or protobufjs and parsing the .proto at the
// soul's start (docs/performance.md). proto/wire.test.ts holds it to protobufjs and the contract.
import { KEEPER_MESSAGE, SOUL_MESSAGE } from './stream-fields';
import type { OutgoingSoulMessage, ReceivedKeeperMessage } from './types';
import { decodeMessage, encodeMessage } from './wire';

export interface SoulStreamCodec {
  /** The gRPC method path of the stream. */
  path: string;
  encode(message: OutgoingSoulMessage): Uint8Array;
  decode(bytes: Uint8Array): ReceivedKeeperMessage;
}

const codec: SoulStreamCodec = {
  path: '/keeper.stream.v1.EventStream/Connect',
  encode: (m) => encodeMessage(SOUL_MESSAGE, m as unknown as Record<string, unknown>),
  decode: (bytes) => decodeMessage(KEEPER_MESSAGE, bytes) as unknown as ReceivedKeeperMessage,
};

export function soulStreamCodec(): SoulStreamCodec {
  return codec;
}
