// Secrets in render, the references: canonical paths, the declared prefixes, secret inputs, and
// where a secret may go (a file's content, untransformed), each refused with its reason.
import * as assert from 'node:assert/strict';
import { loadServiceFromDir } from '../load/dir';
import { tempService, cleanupTempServices } from '../../test/lint/temp-service';
import { renderWith, SCENARIO, SERVICE } from '../../test/lint/secret-service';
import { evaluateExpression } from '../cel/evaluate';
import { parseReference, refProblem, underPrefix } from '../../common/secret';

describe('secrets in render: references and prefixes', function () {
  after(cleanupTempServices);

  it('refuses paths that are not canonical, with the reason: "..", "//", percent-encoding', function () {
    const svc = loadServiceFromDir(tempService({ 'service.yml': SERVICE, 'scenario/create/main.yml': SCENARIO }));
    for (const [path, why] of [
      ['secret/keeper/services/demo/../../keeper', /holds a "\." or "\.\." segment/],
      ['secret/keeper/services/demo//db', /holds an empty segment/],
      ['secret/keeper/services/demo/%2e%2e/keeper', /holds "%"/],
      ['secret/keeper/services/demo/db/', /starts or ends with "\/"/],
      ['secret/keeper/services/demo/d b', /whitespace/],
    ] as const) {
      const r = renderWith(svc, { db_password: `secretstore:${path}#password` });
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
    const r = renderWith(wide);
    assert.ok(!r.ok);
    assert.equal(r.errors[0]!.rule, 'SL023');
    assert.match(
      r.errors[0]!.message,
      /secretstore\("secret\/keeper", "token"\): secret\/keeper is outside the keeper's secretstore.scenario_prefix/,
    );
  });

  it('a secret input takes a reference only, within the service or incarnation prefixes', function () {
    const svc = loadServiceFromDir(tempService({ 'service.yml': SERVICE, 'scenario/create/main.yml': SCENARIO }));
    const plain = renderWith(svc, { db_password: 'hunter2-canary' });
    assert.ok(!plain.ok);
    assert.equal(plain.errors[0]!.rule, 'SL024');
    assert.doesNotMatch(JSON.stringify(plain.errors), /hunter2-canary/);
    const own = renderWith(svc, {
      db_password: 'secretstore:secret/keeper/services/incarnations/demo-1/r1#db_password',
    });
    assert.ok(own.ok);
    const other = renderWith(svc, {
      db_password: 'secretstore:secret/keeper/services/incarnations/demo-2/r1#db_password',
    });
    assert.ok(!other.ok);
    assert.equal(other.errors[0]!.rule, 'SL023');
  });

  it('refuses a transformed secret and a secret mixed into state text', function () {
    const upper = SCENARIO.replace('db=${input.db_password}', 'db=${input.db_password.upperAscii()}');
    const svc = loadServiceFromDir(tempService({ 'service.yml': SERVICE, 'scenario/create/main.yml': upper }));
    const r = renderWith(svc);
    assert.deepEqual(svc.errors, []);
    assert.ok(!r.ok);
    assert.match(r.errors[0]!.message, /a secret was transformed/);
    const mixed = SCENARIO.replace('password_ref: "${input.db_password}"', 'password_ref: "pw=${input.db_password}"');
    const svc2 = loadServiceFromDir(tempService({ 'service.yml': SERVICE, 'scenario/create/main.yml': mixed }));
    const r2 = renderWith(svc2);
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
    const r = renderWith(svc);
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
