import * as assert from 'node:assert/strict';
import { loadServiceFromDir } from '../load/dir';
import { tempService, cleanupTempServices } from '../../test/lint/temp-service';
import { evaluateExpression } from '../cel/evaluate';
import { parseReference, refProblem, underPrefix } from '../../common/secret';
import { renderWithSecrets } from './render';
import { deriveHandleKey, verifyHandle } from './handles';
import type { PlanStep } from '../render/plan';

const KEY = deriveHandleKey(new Uint8Array(32).fill(3));
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

const entries = (step: PlanStep) => (step.secrets ?? []).map((e) => [e.path, e.field]);

describe('secrets in render', function () {
  after(cleanupTempServices);
  const secrets = {
    binding: 'demo.create.r1',
    handleKey: KEY,
    keeperPrefix: 'secret/keeper/services/',
    inputPrefixes: ['secret/keeper/services/incarnations/demo-1/'],
  };

  it('puts handles, never values or paths, into the step text, each signed for the run, host and step; state keeps the reference', function () {
    const svc = loadServiceFromDir(tempService({ 'service.yml': SERVICE, 'scenario/create/main.yml': SCENARIO }));
    assert.deepEqual(svc.errors, []);
    const r = renderWithSecrets({
      service: svc,
      operation: 'create',
      input: { db_password: 'secretstore:secret/keeper/services/demo/db#password' },
      state: {},
      hosts: [host],
      secrets,
    });
    assert.ok(r.ok, JSON.stringify(!r.ok && r.errors));
    const step = r.plan.hosts[0]!.steps[0]!;
    assert.equal(step.params['content'], 'db=«secret:0»\napi=«secret:1»\n');
    assert.deepEqual(entries(step), [
      ['secret/keeper/services/demo/db', 'password'],
      ['secret/keeper/services/demo/api', 'token'],
    ]);
    const b = { binding: 'demo.create.r1', sid: host.sid, index: 0 };
    assert.ok(step.secrets!.every((e, n) => verifyHandle(KEY, { ...b, n }, e)));
    // Bound: the same entry verifies for no other run, host, step or position.
    const e0 = step.secrets![0]!;
    for (const other of [
      { ...b, n: 1 },
      { ...b, index: 1, n: 0 },
      { ...b, sid: 'web-2.example.com', n: 0 },
      { ...b, binding: 'demo.create.r2', n: 0 },
    ]) {
      assert.equal(verifyHandle(KEY, other, e0), false, JSON.stringify(other));
    }
    assert.equal(verifyHandle(KEY, { ...b, n: 0 }, { ...e0, path: 'secret/keeper/services/demo/api' }), false);
    assert.deepEqual(r.plan.nextState, { password_ref: 'secretstore:secret/keeper/services/demo/db#password' });
    assert.deepEqual(r.plan.input, { db_password: 'secretstore:secret/keeper/services/demo/db#password' });
  });

  it("refuses a marker built with CEL string functions out of a legitimate one (the review's attack), at the task", function () {
    const forged = SCENARIO.replace(
      "api=${secretstore('secret/keeper/services/demo/api', 'token')}",
      "api=${secretstore('secret/keeper/services/demo/api', 'token').substring(0, 8) + 'secret/keeper/services/../../keeper#signing_key@' + " +
        "secretstore('secret/keeper/services/demo/api', 'token').substring(secretstore('secret/keeper/services/demo/api', 'token').indexOf(':') + 1)}",
    );
    const svc = loadServiceFromDir(tempService({ 'service.yml': SERVICE, 'scenario/create/main.yml': forged }));
    assert.deepEqual(svc.errors, []);
    const r = renderWithSecrets({
      service: svc,
      operation: 'create',
      input: { db_password: 'secretstore:secret/keeper/services/demo/db#password' },
      state: {},
      hosts: [host],
      secrets,
    });
    assert.ok(!r.ok);
    assert.deepEqual(
      r.errors.map((e) => [e.rule, e.file, e.line, e.col]),
      [['SL024', 'scenario/create/main.yml', 12, 7]],
    );
    assert.match(
      r.errors[0]!.message,
      /^task "conf": core.file.present param "content" holds «secret: text that is not a secret this render gave the scenario/,
    );
  });

  it('refuses a marker built by a template (replace, printf), at the task; a template placing the secret as it is passes', function () {
    const tmpl = (body: string) =>
      loadServiceFromDir(
        tempService({
          'service.yml': SERVICE,
          'scenario/create/main.yml': [
            'tasks:',
            '  - name: conf',
            '    module: core.file.rendered',
            '    params:',
            '      path: /etc/app.conf',
            '      template: app.tmpl',
            "      vars: {api: \"${secretstore('secret/keeper/services/demo/api', 'token')}\"}",
            '',
          ].join('\n'),
          'templates/app.tmpl': body,
        }),
      );
    const go = (body: string) =>
      renderWithSecrets({ service: tmpl(body), operation: 'create', input: {}, state: {}, hosts: [host], secrets });
    const placed = go('api={{ .api }}\n');
    assert.ok(placed.ok, JSON.stringify(!placed.ok && placed.errors));
    assert.equal(placed.plan.hosts[0]!.steps[0]!.params['content'], 'api=«secret:0»\n');
    for (const body of [
      'k={{ .api | replace "«secret:" "«secret:secret/keeper/services/../../keeper#signing_key@" }}\n',
      'k={{ printf "«secret:%s#%s" "secret/keeper" "signing_key" }}\n',
    ]) {
      const r = go(body);
      assert.ok(!r.ok, body);
      assert.deepEqual(
        r.errors.map((e) => [e.rule, e.line, e.col]),
        [['SL024', 7, 7]],
        body,
      );
      assert.match(r.errors[0]!.message, /holds «secret: text that is not a secret this render gave the scenario/);
    }
  });

  it('a marker copied into another step is the same secret, nothing else; one from elsewhere (an input, another run) is refused', function () {
    const copied =
      SCENARIO +
      [
        '  - name: copy',
        '    module: core.file.present',
        '    params:',
        '      path: /etc/copy',
        '      content: "${\'«secret:\' + input.db_password.substring(8)}"',
        '',
      ].join('\n');
    const svc = loadServiceFromDir(tempService({ 'service.yml': SERVICE, 'scenario/create/main.yml': copied }));
    const r = renderWithSecrets({
      service: svc,
      operation: 'create',
      input: { db_password: 'secretstore:secret/keeper/services/demo/db#password' },
      state: {},
      hosts: [host],
      secrets,
    });
    assert.ok(r.ok, JSON.stringify(!r.ok && r.errors));
    const copy = r.plan.hosts[0]!.steps[1]!;
    assert.equal(copy.params['content'], '«secret:0»');
    assert.deepEqual(entries(copy), [['secret/keeper/services/demo/db', 'password']]);
    // A marker given as plain text (as if cut out of another run's render): its token is not this render's.
    const plainIn =
      SCENARIO.replace('input:\n', 'input:\n  note: {type: string}\n') +
      [
        '  - name: note',
        '    module: core.file.present',
        '    params: {path: /etc/note, content: "${input.note}"}',
        '',
      ].join('\n');
    const svc2 = loadServiceFromDir(tempService({ 'service.yml': SERVICE, 'scenario/create/main.yml': plainIn }));
    assert.deepEqual(svc2.errors, []);
    const r2 = renderWithSecrets({
      service: svc2,
      operation: 'create',
      hosts: [host],
      state: {},
      secrets,
      input: {
        db_password: 'secretstore:secret/keeper/services/demo/db#password',
        note: `«secret:${'ab'.repeat(16)}»`,
      },
    });
    assert.ok(!r2.ok);
    assert.deepEqual(
      r2.errors.map((e) => [e.rule, e.line]),
      [['SL024', 18]],
    );
    assert.match(r2.errors[0]!.message, /^task "note": .*not a secret this render gave the scenario/);
  });

  it('committed state takes no marker built from text: refused at the state key', function () {
    const forged = SCENARIO.replace(
      'password_ref: "${input.db_password}"',
      "password_ref: \"${'«secret:' + 'secret/keeper#signing_key»'}\"",
    );
    const svc = loadServiceFromDir(tempService({ 'service.yml': SERVICE, 'scenario/create/main.yml': forged }));
    assert.deepEqual(svc.errors, []);
    const r = renderWithSecrets({
      service: svc,
      operation: 'create',
      input: { db_password: 'secretstore:secret/keeper/services/demo/db#password' },
      state: {},
      hosts: [host],
      secrets,
    });
    assert.ok(!r.ok);
    assert.deepEqual(
      r.errors.map((e) => [e.rule, e.line]),
      [['SL024', 5]],
    );
    assert.match(
      r.errors[0]!.message,
      /^state_changes: "password_ref" holds «secret: text that is not a secret this render gave the scenario/,
    );
  });

  it('refuses paths that are not canonical, with the reason: "..", "//", percent-encoding', function () {
    const svc = loadServiceFromDir(tempService({ 'service.yml': SERVICE, 'scenario/create/main.yml': SCENARIO }));
    for (const [path, why] of [
      ['secret/keeper/services/demo/../../keeper', /holds a "\." or "\.\." segment/],
      ['secret/keeper/services/demo//db', /holds an empty segment/],
      ['secret/keeper/services/demo/%2e%2e/keeper', /holds "%"/],
      ['secret/keeper/services/demo/db/', /starts or ends with "\/"/],
      ['secret/keeper/services/demo/d b', /whitespace/],
    ] as const) {
      const r = renderWithSecrets({
        service: svc,
        operation: 'create',
        input: { db_password: `secretstore:${path}#password` },
        state: {},
        hosts: [host],
        secrets,
      });
      assert.ok(!r.ok, path);
      assert.equal(r.errors[0]!.rule, 'SL024', path);
      assert.equal(parseReference(`secretstore:${path}#password`), null, path);
      assert.match(String(refProblem(path, 'password')), why, path);
    }
    // In a secretstore(...) call the path is refused where it is written, offline too.
    const dots = loadServiceFromDir(
      tempService({
        'service.yml': SERVICE,
        'scenario/create/main.yml': SCENARIO.replace(
          'secret/keeper/services/demo/api',
          'secret/keeper/services/demo/./api',
        ),
      }),
    );
    assert.deepEqual(
      dots.errors.map((e) => [e.rule, e.line]),
      [['SL023', 14]],
    );
    assert.match(dots.errors[0]!.message, /not a canonical secrets-store path: it holds a "\." or "\.\." segment/);
    // A prefix check compares whole canonical segments.
    assert.equal(underPrefix('secret/keeper/services/demo/../../keeper', 'secret/keeper/services/demo/'), false);
    assert.equal(underPrefix('secret/keeper/services/demox/db', 'secret/keeper/services/demo/'), false);
    assert.equal(underPrefix('secret/keeper/services/demo/db', 'secret/keeper/services/demo/'), true);
  });

  it('refuses a read outside the declared prefixes at render, naming the path and the rule', function () {
    const bad = SCENARIO.replace('secret/keeper/services/demo/api', 'secret/keeper/services/other/api');
    // The literal path is caught when the service is loaded (soul-lint) ...
    const svc = loadServiceFromDir(tempService({ 'service.yml': SERVICE, 'scenario/create/main.yml': bad }));
    const lint = svc.errors.filter((e) => e.rule === 'SL023');
    assert.equal(lint.length, 1);
    assert.deepEqual([lint[0]!.file, lint[0]!.line], ['scenario/create/main.yml', 14]);
    assert.match(lint[0]!.message, /secret\/keeper\/services\/other\/api is outside the prefixes the service declares/);
    // ... and a path the keeper's prefix excludes fails at render even when the service declares it.
    const wide = loadServiceFromDir(
      tempService({
        'service.yml': SERVICE.replace('secret/keeper/services/demo/', 'secret/'),
        'scenario/create/main.yml': SCENARIO.replace('secret/keeper/services/demo/api', 'secret/keeper'),
      }),
    );
    assert.deepEqual(wide.errors, []);
    const r = renderWithSecrets({
      service: wide,
      operation: 'create',
      input: { db_password: 'secretstore:secret/keeper/services/demo/db#password' },
      state: {},
      hosts: [host],
      secrets,
    });
    assert.ok(!r.ok);
    assert.equal(r.errors[0]!.rule, 'SL023');
    assert.match(
      r.errors[0]!.message,
      /secretstore\("secret\/keeper", "token"\): secret\/keeper is outside the keeper's secretstore.scenario_prefix/,
    );
  });

  it('a secret input takes a reference only, within the service or incarnation prefixes', function () {
    const svc = loadServiceFromDir(tempService({ 'service.yml': SERVICE, 'scenario/create/main.yml': SCENARIO }));
    const plain = renderWithSecrets({
      service: svc,
      operation: 'create',
      input: { db_password: 'hunter2-canary' },
      state: {},
      hosts: [host],
      secrets,
    });
    assert.ok(!plain.ok);
    assert.equal(plain.errors[0]!.rule, 'SL024');
    assert.doesNotMatch(JSON.stringify(plain.errors), /hunter2-canary/);
    const own = renderWithSecrets({
      service: svc,
      operation: 'create',
      input: { db_password: 'secretstore:secret/keeper/services/incarnations/demo-1/r1#db_password' },
      state: {},
      hosts: [host],
      secrets,
    });
    assert.ok(own.ok);
    const other = renderWithSecrets({
      service: svc,
      operation: 'create',
      input: { db_password: 'secretstore:secret/keeper/services/incarnations/demo-2/r1#db_password' },
      state: {},
      hosts: [host],
      secrets,
    });
    assert.ok(!other.ok);
    assert.equal(other.errors[0]!.rule, 'SL023');
  });

  it('refuses a transformed secret and a secret mixed into state text', function () {
    const upper = SCENARIO.replace('db=${input.db_password}', 'db=${input.db_password.upperAscii()}');
    const svc = loadServiceFromDir(tempService({ 'service.yml': SERVICE, 'scenario/create/main.yml': upper }));
    const r = renderWithSecrets({
      service: svc,
      operation: 'create',
      input: { db_password: 'secretstore:secret/keeper/services/demo/db#password' },
      state: {},
      hosts: [host],
      secrets,
    });
    assert.deepEqual(svc.errors, []);
    assert.ok(!r.ok);
    assert.match(r.errors[0]!.message, /a secret was transformed/);
    const mixed = SCENARIO.replace('password_ref: "${input.db_password}"', 'password_ref: "pw=${input.db_password}"');
    const svc2 = loadServiceFromDir(tempService({ 'service.yml': SERVICE, 'scenario/create/main.yml': mixed }));
    const r2 = renderWithSecrets({
      service: svc2,
      operation: 'create',
      input: { db_password: 'secretstore:secret/keeper/services/demo/db#password' },
      state: {},
      hosts: [host],
      secrets,
    });
    assert.ok(!r2.ok);
    assert.match(r2.errors[0]!.message, /committed state may hold a reference, never a value/);
  });

  it("a secret goes only into a file's content, never into a param a result could echo", function () {
    const pkg = SCENARIO.replace(
      'tasks:',
      'tasks:\n  - name: pkg\n    module: core.file.present\n    params: {path: "/etc/${input.db_password}", content: x}',
    );
    const svc = loadServiceFromDir(tempService({ 'service.yml': SERVICE, 'scenario/create/main.yml': pkg }));
    assert.deepEqual(svc.errors, []);
    const r = renderWithSecrets({
      service: svc,
      operation: 'create',
      input: { db_password: 'secretstore:secret/keeper/services/demo/db#password' },
      state: {},
      hosts: [host],
      secrets,
    });
    assert.ok(!r.ok);
    assert.deepEqual(
      [r.errors[0]!.rule, r.errors[0]!.message],
      [
        'SL024',
        'task "pkg": core.file.present param "path" holds a secret; a secret can go only into a file\'s content',
      ],
    );
  });

  it('soul-lint refuses a value as the default of a secret input, and a computed path', function () {
    const s = SCENARIO.replace(
      '{type: string, secret: true}',
      '{type: string, secret: true, default: "s3cret"}',
    ).replace("secretstore('secret/keeper/services/demo/api', 'token')", "secretstore(input.db_password, 'token')");
    const errs = loadServiceFromDir(tempService({ 'service.yml': SERVICE, 'scenario/create/main.yml': s })).errors;
    assert.deepEqual(errs.map((e) => [e.rule, e.line]).sort(), [
      ['SL023', 14],
      ['SL024', 2],
    ]);
  });

  it('secretstore() outside render is refused', function () {
    assert.throws(
      () => evaluateExpression('secretstore("secret/keeper/services/x", "y") == ""', {}),
      /evaluated at render only/,
    );
  });
});
