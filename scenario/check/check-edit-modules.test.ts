/**
 * soul-lint on the file-editing modules (core.line.*, core.block.present, core.ini.set,
 * core.sysctl.set, core.cron.*): the rules their schemas cannot say (scenario/modules ModuleSpec.check)
 * are SL010 findings at the param, with the fix in the message; an expression is left to render.
 */
import assert from 'node:assert/strict';
import { checkModuleParams, checkWireParams } from '../modules';
import { caseTests, task, type Case } from '../../test/lint/check-cases';

const CASES: Case[] = [
  {
    name: 'a regexp with a Python named group',
    files: {
      'scenario/create/main.yml': task(
        'core.line.present',
        '      path: /etc/x\n      line: a\n      regexp: "^(?P<k>a)"\n',
      ),
    },
    rule: 'SL010',
    at: ['scenario/create/main.yml', 7, 15],
    message: /parameter "regexp" is not a valid JavaScript regular expression: .*a named group is \(\?<name>\.\.\.\)/,
  },
  {
    name: 'insertafter and insertbefore together',
    files: {
      'scenario/create/main.yml': task(
        'core.block.present',
        '      path: /etc/x\n      name: a\n      content: b\n      insertafter: EOF\n      insertbefore: BOF\n',
      ),
    },
    rule: 'SL010',
    at: ['scenario/create/main.yml', 9, 21],
    message: /"insertafter" and "insertbefore" exclude each other; keep one/,
  },
  {
    name: 'a cron command with an unescaped %',
    files: {
      'scenario/create/main.yml': task(
        'core.cron.present',
        '      name: backup\n      schedule: "@daily"\n      command: date +%F\n',
      ),
    },
    rule: 'SL010',
    at: ['scenario/create/main.yml', 7, 16],
    message: /parameter "command" holds an unescaped %.*write \\% for a literal %/,
  },
  {
    name: 'a sysctl file given as a path',
    files: {
      'scenario/create/main.yml': task(
        'core.sysctl.set',
        '      name: net.ipv4.ip_forward\n      value: 1\n      file: /etc/x\n',
      ),
    },
    rule: 'SL010',
    at: ['scenario/create/main.yml', 7, 13],
    message: /parameter "file" has an invalid value/,
  },
];

describe('service checks: the file-editing modules', function () {
  caseTests(CASES);

  it('render, executions and the soul judge the same rules (checkModuleParams, checkWireParams)', () => {
    const bad = { path: '/etc/x', line: 'a', regexp: '(', insertafter: 'x', insertbefore: 'BOF' };
    const want = [
      {
        pointer: '/regexp',
        param: 'regexp',
        message: /^parameter "regexp" is not a valid JavaScript regular expression/,
      },
      { pointer: '/insertbefore', param: 'insertbefore', message: /exclude each other/ },
    ];
    for (const found of [checkModuleParams('core.line.present', bad)!, checkWireParams('core.line.present', bad)!]) {
      assert.equal(found.length, 2, JSON.stringify(found));
      for (const [i, w] of want.entries()) {
        assert.deepEqual([found[i]!.pointer, found[i]!.param], [w.pointer, w.param]);
        assert.match(found[i]!.message, w.message);
      }
    }
    assert.deepEqual(checkModuleParams('core.line.present', { path: '/etc/x', line: 'a', regexp: '^a\\s' }), []);
    assert.deepEqual(
      checkModuleParams('core.line.absent', { path: '/etc/x', line: 'a', regexp: 'a' })![0]!.param,
      'line',
    );
  });
});
