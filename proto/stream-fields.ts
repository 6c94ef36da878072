// The EventStream's messages (proto/keeper/stream/v1/event_stream.proto) as field tables for
// proto/wire.ts, so that the soul's stream reads and writes them without parsing the .proto at start.
// Written beside the .proto and held to it by proto/wire.test.ts: every message's field names,
// numbers and kinds must be what protobufjs reads from the contract, or the suite fails.
import type { MessageSpec } from './wire';

const P = 'keeper.stream.v1';

const soulprint: MessageSpec = {
  type: `${P}.Soulprint`,
  fields: [
    { name: 'fqdn', no: 1, kind: 'string' },
    { name: 'hostname', no: 2, kind: 'string' },
    { name: 'os_family', no: 3, kind: 'string' },
    { name: 'os_name', no: 4, kind: 'string' },
    { name: 'os_release', no: 5, kind: 'string' },
    { name: 'architecture', no: 6, kind: 'string' },
    { name: 'cpu_count', no: 7, kind: 'uint32' },
    { name: 'memory_bytes', no: 8, kind: 'uint64' },
    { name: 'addresses', no: 9, kind: 'strings' },
    { name: 'soul_version', no: 10, kind: 'string' },
  ],
};

/** What a soul sends. */
export const SOUL_MESSAGE: MessageSpec = {
  type: `${P}.SoulMessage`,
  oneof: 'msg',
  fields: [
    { name: 'hello', no: 1, kind: 'message', fields: { type: `${P}.Hello`, fields: [
      { name: 'soulprint', no: 1, kind: 'message', fields: soulprint },
      { name: 'soul_version', no: 2, kind: 'string' },
    ] } },
    { name: 'heartbeat', no: 2, kind: 'message', fields: { type: `${P}.Heartbeat`, fields: [
      { name: 'seq', no: 1, kind: 'uint64' },
    ] } },
    { name: 'facts', no: 3, kind: 'message', fields: { type: `${P}.Facts`, fields: [
      { name: 'soulprint', no: 1, kind: 'message', fields: soulprint },
    ] } },
    { name: 'step_progress', no: 4, kind: 'message', fields: { type: `${P}.StepProgress`, fields: [
      { name: 'request_id', no: 1, kind: 'string' },
      { name: 'message', no: 2, kind: 'string' },
    ] } },
    { name: 'step_result', no: 5, kind: 'message', fields: { type: `${P}.StepResult`, fields: [
      { name: 'request_id', no: 1, kind: 'string' },
      { name: 'apply_id', no: 2, kind: 'string' },
      { name: 'step_index', no: 3, kind: 'uint32' },
      { name: 'changed', no: 4, kind: 'bool' },
      { name: 'ok', no: 5, kind: 'bool' },
      { name: 'output', no: 6, kind: 'string' },
      { name: 'started_at_ms', no: 7, kind: 'int64' },
      { name: 'finished_at_ms', no: 8, kind: 'int64' },
      { name: 'replayed', no: 9, kind: 'bool' },
      { name: 'diff_json', no: 10, kind: 'string' },
    ] } },
    { name: 'renew_certificate', no: 6, kind: 'message', fields: { type: `${P}.RenewCertificate`, fields: [
      { name: 'csr_pem', no: 1, kind: 'string' },
    ] } },
  ],
};

/** What a keeper sends. */
export const KEEPER_MESSAGE: MessageSpec = {
  type: `${P}.KeeperMessage`,
  oneof: 'msg',
  fields: [
    { name: 'welcome', no: 1, kind: 'message', fields: { type: `${P}.Welcome`, fields: [
      { name: 'session_id', no: 1, kind: 'string' },
      { name: 'epoch', no: 2, kind: 'uint64' },
      { name: 'heartbeat_interval_ms', no: 3, kind: 'uint32' },
      { name: 'kid', no: 4, kind: 'string' },
    ] } },
    { name: 'step_request', no: 2, kind: 'message', fields: { type: `${P}.StepRequest`, fields: [
      { name: 'request_id', no: 1, kind: 'string' },
      { name: 'apply_id', no: 2, kind: 'string' },
      { name: 'step_index', no: 3, kind: 'uint32' },
      { name: 'module', no: 4, kind: 'string' },
      { name: 'params_json', no: 5, kind: 'string' },
      { name: 'dry_run', no: 6, kind: 'bool' },
      { name: 'show_content', no: 7, kind: 'bool' },
      { name: 'program', no: 8, kind: 'message', fields: { type: `${P}.ModuleProgram`, fields: [
        { name: 'sha256', no: 1, kind: 'string' },
        { name: 'content_base64', no: 2, kind: 'string' },
        { name: 'dry_run', no: 3, kind: 'bool' },
        { name: 'timeout_ms', no: 4, kind: 'uint32' },
      ] } },
    ] } },
    { name: 'cancel', no: 3, kind: 'message', fields: { type: `${P}.Cancel`, fields: [
      { name: 'request_id', no: 1, kind: 'string' },
      { name: 'reason', no: 2, kind: 'string' },
    ] } },
    { name: 'goodbye', no: 4, kind: 'message', fields: { type: `${P}.Goodbye`, fields: [
      { name: 'reason', no: 1, kind: 'string' },
    ] } },
    { name: 'certificate_renewed', no: 5, kind: 'message', fields: { type: `${P}.CertificateRenewed`, fields: [
      { name: 'certificate_pem', no: 1, kind: 'string' },
      { name: 'chain_pem', no: 2, kind: 'strings' },
      { name: 'serial', no: 3, kind: 'string' },
      { name: 'not_after_ms', no: 4, kind: 'int64' },
    ] } },
    { name: 'renewal_refused', no: 6, kind: 'message', fields: { type: `${P}.RenewalRefused`, fields: [
      { name: 'reason', no: 1, kind: 'string' },
      { name: 'retryable', no: 2, kind: 'bool' },
    ] } },
  ],
};
