// The Bootstrap contract's messages (proto/keeper/bootstrap/v1/bootstrap.proto) as field tables for
// proto/wire.ts: `soul init` enrols with them over its own gRPC client (agent/grpc-stream.ts), so the
// soul package carries neither grpc-js nor protobufjs. Held to the .proto by proto/wire.test.ts.
import type { MessageSpec } from './wire';

export const ENROLL_REQUEST: MessageSpec = {
  type: 'keeper.bootstrap.v1.EnrollRequest',
  fields: [
    { name: 'token', no: 1, kind: 'string' },
    { name: 'sid', no: 2, kind: 'string' },
    { name: 'csr_pem', no: 3, kind: 'string' },
  ],
};

export const ENROLL_RESPONSE: MessageSpec = {
  type: 'keeper.bootstrap.v1.EnrollResponse',
  fields: [
    { name: 'sid', no: 1, kind: 'string' },
    { name: 'certificate_pem', no: 2, kind: 'string' },
    { name: 'chain_pem', no: 3, kind: 'strings' },
    { name: 'serial', no: 4, kind: 'string' },
    { name: 'not_after_ms', no: 5, kind: 'int64' },
  ],
};
