// The soul's messages as bytes, for its own gRPC client (agent/grpc-stream.ts): read and written with
// proto/wire.ts from the field tables generated into proto/generated/ (scripts/gen-proto.js), exactly
// as grpc-js's proto-loader does on the keeper (fromObject + encode; decode + toObject with the shared
// LOADER_OPTIONS), without loading grpc-js, proto-loader or protobufjs and parsing the .proto files at
// the soul's start (docs/performance.md). proto/wire.test.ts holds them to protobufjs and the contracts.
import { ENROLL_REQUEST, ENROLL_RESPONSE } from './bootstrap-fields';
import { KEEPER_MESSAGE, SOUL_MESSAGE } from './stream-fields';
import type { EnrollRequest, EnrollResponse, OutgoingSoulMessage, ReceivedKeeperMessage } from './types';
import { decodeMessage, encodeMessage } from './wire';

/** One gRPC method as the soul calls it: its path, how it writes what it sends and reads what it receives. */
export interface Codec<Out, In> {
  path: string;
  encode(message: Out): Uint8Array;
  decode(bytes: Uint8Array): In;
}

/** keeper.stream.v1.EventStream/Connect: `soul run`'s one stream. */
export const EVENT_STREAM_CONNECT: Codec<OutgoingSoulMessage, ReceivedKeeperMessage> = {
  path: '/keeper.stream.v1.EventStream/Connect',
  encode: (m) => encodeMessage(SOUL_MESSAGE, m as unknown as Record<string, unknown>),
  decode: (bytes) => decodeMessage(KEEPER_MESSAGE, bytes) as unknown as ReceivedKeeperMessage,
};

/** keeper.bootstrap.v1.Bootstrap/Enroll: `soul init`'s one call. */
export const BOOTSTRAP_ENROLL: Codec<EnrollRequest, EnrollResponse> = {
  path: '/keeper.bootstrap.v1.Bootstrap/Enroll',
  encode: (m) => encodeMessage(ENROLL_REQUEST, m as unknown as Record<string, unknown>),
  decode: (bytes) => decodeMessage(ENROLL_RESPONSE, bytes) as unknown as EnrollResponse,
};
