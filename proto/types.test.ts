// The wire types (generated into proto/generated/) name exactly the fields the .proto files declare,
// as proto-loader reads them on the keeper.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as protoLoader from '@grpc/proto-loader';
import { LOADER_OPTIONS } from './contracts';
import { bootstrapService, eventStreamService } from './load';

function fieldsOf(file: string, message: string): string[] {
  let root = __dirname;
  while (!fs.existsSync(path.join(root, 'proto', 'keeper'))) root = path.dirname(root);
  const def = protoLoader.loadSync(path.join(root, 'proto', file), {
    ...LOADER_OPTIONS,
    includeDirs: [path.join(root, 'proto')],
  });
  const t = def[message] as unknown as { type: { field: { name: string }[] } };
  return t.type.field.map((f) => f.name).sort();
}

describe('proto contracts', () => {
  it('loads both services from the repository proto/ folder', () => {
    assert.ok(bootstrapService().service.Enroll);
    assert.ok(
      eventStreamService().service.Connect.requestStream && eventStreamService().service.Connect.responseStream,
    );
  });

  it('has the fields proto/types.ts describes', () => {
    const s = 'keeper/stream/v1/event_stream.proto';
    assert.deepEqual(fieldsOf(s, 'keeper.stream.v1.SoulMessage'), [
      'facts',
      'heartbeat',
      'hello',
      'renew_certificate',
      'step_progress',
      'step_result',
    ]);
    assert.deepEqual(fieldsOf(s, 'keeper.stream.v1.KeeperMessage'), [
      'cancel',
      'certificate_renewed',
      'goodbye',
      'refresh_facts',
      'renewal_refused',
      'step_request',
      'welcome',
    ]);
    assert.deepEqual(fieldsOf(s, 'keeper.stream.v1.RefreshFacts'), []);
    assert.deepEqual(fieldsOf(s, 'keeper.stream.v1.RenewCertificate'), ['csr_pem']);
    assert.deepEqual(fieldsOf(s, 'keeper.stream.v1.CertificateRenewed'), [
      'certificate_pem',
      'chain_pem',
      'not_after_ms',
      'serial',
    ]);
    assert.deepEqual(fieldsOf(s, 'keeper.stream.v1.RenewalRefused'), ['reason', 'retryable']);
    assert.deepEqual(fieldsOf(s, 'keeper.stream.v1.Soulprint'), [
      'addresses',
      'architecture',
      'cpu_count',
      'fqdn',
      'hostname',
      'memory_bytes',
      'os_family',
      'os_name',
      'os_release',
      'soul_version',
    ]);
    assert.deepEqual(fieldsOf(s, 'keeper.stream.v1.StepResult'), [
      'apply_id',
      'changed',
      'diff_json',
      'files',
      'finished_at_ms',
      'ok',
      'output',
      'replayed',
      'request_id',
      'started_at_ms',
      'step_index',
    ]);
    assert.deepEqual(fieldsOf(s, 'keeper.stream.v1.FileIdentity'), ['digest', 'file_id', 'path', 'role']);
    assert.deepEqual(fieldsOf(s, 'keeper.stream.v1.StepRequest'), [
      'apply_id',
      'dry_run',
      'module',
      'params_json',
      'program',
      'redact_json',
      'request_id',
      'show_content',
      'step_index',
      'withhold',
    ]);
    assert.deepEqual(fieldsOf(s, 'keeper.stream.v1.ModuleProgram'), [
      'content_base64',
      'dry_run',
      'runtime',
      'sha256',
      'timeout_ms',
    ]);
    assert.deepEqual(fieldsOf('keeper/bootstrap/v1/bootstrap.proto', 'keeper.bootstrap.v1.EnrollResponse'), [
      'certificate_pem',
      'chain_pem',
      'not_after_ms',
      'serial',
      'sid',
    ]);
  });
});
