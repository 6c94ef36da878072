// The EventStream's field tables for proto/wire.ts, generated from
// proto/keeper/stream/v1/event_stream.proto by scripts/gen-proto.js (proto/generated/event-stream.ts).
export { KEEPER_MESSAGE, SOUL_MESSAGE } from './generated/event-stream';
