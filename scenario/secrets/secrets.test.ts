import * as assert from 'node:assert/strict';
import { loadServiceFromDir } from '../load/dir';
import { tempService, cleanupTempServices } from '../../test/lint/temp-service';
import { evaluateExpression } from '../cel/evaluate';
import { renderWithSecrets } from './render';
import { splitMarkers } from './markers';

const NONCE = 'a1b2c3d4e5f6a7b8c9d0e1f2';
const host = { sid: 'web-1.example.com', soulprint: { fqdn: 'web-1.example.com' } };
const SERVICE = 'name: demo\nstate_schema_version: 1\nsecrets: [secret/keeper/services/demo/]\n';
const SCENARIO = [
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

describe('secrets in render', function () {
  after(cleanupTempServices);
  const secrets = { nonce: NONCE, keeperPrefix: 'secret/keeper/services/', inputPrefixes: ['secret/keeper/services/incarnations/demo-1/'] };

  it('puts markers, never values, into the plan and keeps the reference in state', function () {
    const svc = loadServiceFromDir(tempService({ 'service.yml': SERVICE, 'scenario/create/main.yml': SCENARIO }));
    assert.deepEqual(svc.errors, []);
    const r = renderWithSecrets({ service: svc, operation: 'create', input: { db_password: 'secretstore:secret/keeper/services/demo/db#password' }, state: {}, hosts: [host], secrets });
    assert.ok(r.ok, JSON.stringify(!r.ok && r.errors));
    const content = r.plan.hosts[0]!.steps[0]!.params['content'] as string;
    assert.deepEqual(splitMarkers(content, NONCE), ['db=', { ref: { path: 'secret/keeper/services/demo/db', field: 'password' } }, '\napi=',
      { ref: { path: 'secret/keeper/services/demo/api', field: 'token' } }, '\n']);
    assert.deepEqual(r.plan.nextState, { password_ref: 'secretstore:secret/keeper/services/demo/db#password' });
  });

  it('refuses a read outside the declared prefixes at render, naming the path and the rule', function () {
    const bad = SCENARIO.replace("secret/keeper/services/demo/api", 'secret/keeper/services/other/api');
    // The literal path is caught when the service is loaded (soul-lint) ...
    const svc = loadServiceFromDir(tempService({ 'service.yml': SERVICE, 'scenario/create/main.yml': bad }));
    const lint = svc.errors.filter((e) => e.rule === 'SL023');
    assert.equal(lint.length, 1);
    assert.deepEqual([lint[0]!.file, lint[0]!.line], ['scenario/create/main.yml', 14]);
    assert.match(lint[0]!.message, /secret\/keeper\/services\/other\/api is outside the prefixes the service declares/);
    // ... and a path the keeper's prefix excludes fails at render even when the service declares it.
    const wide = loadServiceFromDir(tempService({ 'service.yml': SERVICE.replace('secret/keeper/services/demo/', 'secret/'), 'scenario/create/main.yml': SCENARIO.replace('secret/keeper/services/demo/api', 'secret/keeper') }));
    assert.deepEqual(wide.errors, []);
    const r = renderWithSecrets({ service: wide, operation: 'create', input: { db_password: 'secretstore:secret/keeper/services/demo/db#password' }, state: {}, hosts: [host], secrets });
    assert.ok(!r.ok);
    assert.equal(r.errors[0]!.rule, 'SL023');
    assert.match(r.errors[0]!.message, /secretstore\("secret\/keeper", "token"\): secret\/keeper is outside the keeper's secretstore.scenario_prefix/);
  });

  it('a secret input takes a reference only, within the service or incarnation prefixes', function () {
    const svc = loadServiceFromDir(tempService({ 'service.yml': SERVICE, 'scenario/create/main.yml': SCENARIO }));
    const plain = renderWithSecrets({ service: svc, operation: 'create', input: { db_password: 'hunter2-canary' }, state: {}, hosts: [host], secrets });
    assert.ok(!plain.ok);
    assert.equal(plain.errors[0]!.rule, 'SL024');
    assert.doesNotMatch(JSON.stringify(plain.errors), /hunter2-canary/);
    const own = renderWithSecrets({ service: svc, operation: 'create', input: { db_password: 'secretstore:secret/keeper/services/incarnations/demo-1/r1#db_password' }, state: {}, hosts: [host], secrets });
    assert.ok(own.ok);
    const other = renderWithSecrets({ service: svc, operation: 'create', input: { db_password: 'secretstore:secret/keeper/services/incarnations/demo-2/r1#db_password' }, state: {}, hosts: [host], secrets });
    assert.ok(!other.ok);
    assert.equal(other.errors[0]!.rule, 'SL023');
  });

  it('refuses a transformed secret and a secret mixed into state text', function () {
    const upper = SCENARIO.replace('db=${input.db_password}', 'db=${input.db_password.upperAscii()}');
    const svc = loadServiceFromDir(tempService({ 'service.yml': SERVICE, 'scenario/create/main.yml': upper }));
    const r = renderWithSecrets({ service: svc, operation: 'create', input: { db_password: 'secretstore:secret/keeper/services/demo/db#password' }, state: {}, hosts: [host], secrets });
    assert.deepEqual(svc.errors, []);
    assert.ok(!r.ok);
    assert.match(r.errors[0]!.message, /a secret was transformed/);
    const mixed = SCENARIO.replace('password_ref: "${input.db_password}"', 'password_ref: "pw=${input.db_password}"');
    const svc2 = loadServiceFromDir(tempService({ 'service.yml': SERVICE, 'scenario/create/main.yml': mixed }));
    const r2 = renderWithSecrets({ service: svc2, operation: 'create', input: { db_password: 'secretstore:secret/keeper/services/demo/db#password' }, state: {}, hosts: [host], secrets });
    assert.ok(!r2.ok);
    assert.match(r2.errors[0]!.message, /committed state may hold a reference, never a value/);
  });

  it('a secret goes only into a file\'s content, never into a param a result could echo', function () {
    const pkg = SCENARIO.replace('tasks:', "tasks:\n  - name: pkg\n    module: core.file.present\n    params: {path: \"/etc/${input.db_password}\", content: x}");
    const svc = loadServiceFromDir(tempService({ 'service.yml': SERVICE, 'scenario/create/main.yml': pkg }));
    assert.deepEqual(svc.errors, []);
    const r = renderWithSecrets({ service: svc, operation: 'create', input: { db_password: 'secretstore:secret/keeper/services/demo/db#password' }, state: {}, hosts: [host], secrets });
    assert.ok(!r.ok);
    assert.deepEqual([r.errors[0]!.rule, r.errors[0]!.message], ['SL024', 'task "pkg": core.file.present param "path" holds a secret; a secret can go only into a file\'s content']);
  });

  it('soul-lint refuses a value as the default of a secret input, and a computed path', function () {
    const s = SCENARIO.replace('{type: string, secret: true}', '{type: string, secret: true, default: "s3cret"}')
      .replace("secretstore('secret/keeper/services/demo/api', 'token')", "secretstore(input.db_password, 'token')");
    const errs = loadServiceFromDir(tempService({ 'service.yml': SERVICE, 'scenario/create/main.yml': s })).errors;
    assert.deepEqual(errs.map((e) => [e.rule, e.line]).sort(), [['SL023', 14], ['SL024', 2]]);
  });

  it('secretstore() outside render is refused', function () {
    assert.throws(() => evaluateExpression('secretstore("secret/keeper/services/x", "y") == ""', {}), /evaluated at render only/);
  });
});
