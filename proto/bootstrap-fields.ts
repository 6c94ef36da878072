// The Bootstrap contract's field tables for proto/wire.ts, generated from
// proto/keeper/bootstrap/v1/bootstrap.proto by scripts/gen-proto.js (proto/generated/bootstrap.ts).
export { ENROLL_REQUEST, ENROLL_RESPONSE } from './generated/bootstrap';
