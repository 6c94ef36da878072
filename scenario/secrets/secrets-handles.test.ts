// Secrets in render, the handles and the markers: what a step carries instead of a secret, and
// every way of building a marker out of text, refused where it is built.
import * as assert from 'node:assert/strict';
import { loadServiceFromDir } from '../load/dir';
import { tempService, cleanupTempServices } from '../../test/lint/temp-service';
import { DB_INPUT, KEY, host, renderWith, SCENARIO, SERVICE } from '../../test/lint/secret-service';
import { verifyHandle } from './handles';
import type { PlanStep } from '../render/plan';

const entries = (step: PlanStep) => (step.secrets ?? []).map((e) => [e.path, e.field]);

describe('secrets in render: handles and markers', function () {
  after(cleanupTempServices);

  it('puts handles, never values or paths, into the step text, each signed for the run, host and step; state keeps the reference', function () {
    const svc = loadServiceFromDir(tempService({ 'service.yml': SERVICE, 'scenario/create/main.yml': SCENARIO }));
    assert.deepEqual(svc.errors, []);
    const r = renderWith(svc);
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
    const r = renderWith(svc);
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
    const go = (body: string) => renderWith(tmpl(body), {});
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
    const r = renderWith(svc);
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
    const r2 = renderWith(svc2, { ...DB_INPUT, note: `«secret:${'ab'.repeat(16)}»` });
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
    const r = renderWith(svc);
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
});
