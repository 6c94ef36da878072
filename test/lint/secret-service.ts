// The service, scenario and render settings the secret render tests share
// (scenario/secrets/secrets-handles.test.ts, secrets-references.test.ts): a demo service that
// declares its prefix, a scenario with a secret input into state and a file, one host, and the
// render of a service with them (renderWith), written once for every case.
import type { LoadedService } from '../../scenario/model';
import type { RenderResult } from '../../scenario/render/render';
import { renderWithSecrets, type RenderSecrets } from '../../scenario/secrets/render';
import { deriveHandleKey } from '../../scenario/secrets/handles';

export const KEY = deriveHandleKey(new Uint8Array(32).fill(3));
export const host = { sid: 'web-1.example.com', soulprint: { fqdn: 'web-1.example.com' } };
export const SERVICE = 'name: demo\nstate_schema_version: 1\nsecrets: [secret/keeper/services/demo/]\n';
export const SCENARIO = [
  'input:',
  '  db_password: {type: string, secret: true}',
  'state_changes:',
  '  sets:',
  '    password_ref: "${input.db_password}"',
  'tasks:',
  '  - name: conf',
  '    module: core.file.present',
  '    params:',
  '      path: /etc/app.conf',
  '      mode: "0600"',
  '      content: |',
  '        db=${input.db_password}',
  "        api=${secretstore('secret/keeper/services/demo/api', 'token')}",
  '',
].join('\n');
/** The render's secret settings: the run's binding, its handle key and the prefixes. */
export const secrets: RenderSecrets = {
  binding: 'demo.create.r1',
  handleKey: KEY,
  keeperPrefix: 'secret/keeper/services/',
  inputPrefixes: ['secret/keeper/services/incarnations/demo-1/'],
};

/** The input most cases render with: the database password as a reference under the service's prefix. */
export const DB_INPUT = { db_password: 'secretstore:secret/keeper/services/demo/db#password' };

/** Renders `create` of a loaded demo service for the one host with these settings and `input`. */
export function renderWith(service: LoadedService, input: Record<string, unknown> = DB_INPUT): RenderResult {
  return renderWithSecrets({ service, operation: 'create', input, state: {}, hosts: [host], secrets });
}
