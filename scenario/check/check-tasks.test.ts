/**
 * One case per rule and per error of a scenario's tasks: modules and their parameters, expressions,
 * templates, requisites and registers (test/lint/check-cases.ts).
 */
import { caseTests, task, type Case } from '../../test/lint/check-cases';

const CASES: Case[] = [
  {
    name: 'unknown module',
    files: { 'scenario/create/main.yml': task('core.svc.running', '      name: x\n') },
    rule: 'SL009',
    at: ['scenario/create/main.yml', 3, 13],
    message: /unknown module "core.svc.running"/,
  },
  {
    name: 'template reads a field no vars provide',
    files: {
      'scenario/create/main.yml': task('core.file.rendered', '      path: /tmp/x\n      template: m.tmpl\n'),
      'templates/m.tmpl': 'line one\n{{ if .name }}Hello {{ .greeting }}{{ end }}\n',
    },
    rule: 'SL025',
    at: ['scenario/create/main.yml', 6, 7],
    message: /templates\/m.tmpl:2:.* reads \.name, which the task's vars never provide \(no vars\)/,
  },
  {
    name: 'template reads a field its vars map lacks',
    files: {
      'scenario/create/main.yml': task(
        'core.file.rendered',
        '      path: /tmp/x\n      template: m.tmpl\n      vars:\n        name: a\n',
      ),
      'templates/m.tmpl': '{{ .name }} {{ range .items }}{{ .x }}{{ end }} {{ $.greeting }}\n',
    },
    rule: 'SL025',
    at: ['scenario/create/main.yml', 7, 7],
    message: /reads \.(items|greeting), which the task's vars never provide \(vars: name\)/,
  },
  {
    name: 'unknown parameter',
    files: { 'scenario/create/main.yml': task('core.pkg.installed', '      name: x\n      release: 2\n') },
    rule: 'SL010',
    at: ['scenario/create/main.yml', 6, 7],
    message: /unknown parameter "release"/,
  },
  {
    name: 'missing parameter',
    files: { 'scenario/create/main.yml': task('core.file.present', '      path: /etc/x\n') },
    rule: 'SL010',
    at: ['scenario/create/main.yml', 5, 7],
    message: /missing required parameter "content"/,
  },
  {
    name: 'invalid mode',
    files: {
      'scenario/create/main.yml': task('core.file.present', '      path: /etc/x\n      content: y\n      mode: rw\n'),
    },
    rule: 'SL010',
    at: ['scenario/create/main.yml', 7, 13],
    message: /parameter "mode" has an invalid value/,
  },
  {
    name: 'content written by hand in core.file.rendered',
    files: {
      'templates/a.tmpl': 'x',
      'scenario/create/main.yml': task(
        'core.file.rendered',
        '      path: /etc/x\n      template: a.tmpl\n      content: y\n',
      ),
    },
    rule: 'SL010',
    at: ['scenario/create/main.yml', 7, 7],
    message: /`content` is produced by rendering/,
  },
  {
    name: 'CEL syntax error',
    files: { 'scenario/create/main.yml': task('core.pkg.installed', '      name: x\n', '    when: "1 +"\n') },
    rule: 'SL011',
    at: ['scenario/create/main.yml', 6, 15],
    message: /CEL syntax error/,
  },
  {
    name: 'a literal matches pattern RE2 refuses (a lookahead)',
    files: {
      'scenario/create/main.yml': task(
        'core.pkg.installed',
        '      name: x\n',
        "    when: \"'web'.matches('a(?=b)')\"\n",
      ),
    },
    rule: 'SL011',
    at: ['scenario/create/main.yml', 6, 26],
    message: /matches: the pattern "a\(\?=b\)" is not valid RE2 syntax/,
  },
  {
    name: 'undeclared input',
    files: { 'scenario/create/main.yml': task('core.pkg.installed', '      name: "${input.pkg}"\n') },
    rule: 'SL012',
    at: ['scenario/create/main.yml', 5, 22],
    message: /No such key: pkg/,
  },
  {
    name: 'bare soulprint',
    files: { 'scenario/create/main.yml': task('core.pkg.installed', '      name: "${soulprint.pkg}"\n') },
    rule: 'SL012',
    at: ['scenario/create/main.yml', 5, 16],
    message: /bare `soulprint.<path>`/,
  },
  {
    name: 'registered result read in params',
    files: {
      'scenario/create/main.yml': `tasks:\n  - name: a\n    module: core.pkg.installed\n    params: {name: x}\n    register: a_res\n  - name: b\n    module: core.pkg.installed\n    params:\n      name: "\${a_res.changed}"\n`,
    },
    rule: 'SL012',
    at: ['scenario/create/main.yml', 9, 16],
    message: /Unknown variable: a_res/,
  },
  {
    name: 'template parse error',
    files: { 'templates/a.tmpl': 'x {{ if .y }}\n' },
    rule: 'SL013',
    at: ['templates/a.tmpl', 2, 1],
    message: /unexpected EOF/,
  },
  {
    name: 'unknown template function',
    files: { 'templates/a.tmpl': 'x\n  {{ env "HOME" }}\n' },
    rule: 'SL013',
    at: ['templates/a.tmpl', 2, 6],
    message: /function "env" not defined/,
  },
  {
    name: '${} in a template',
    files: { 'templates/a.tmpl': 'root=${input.root}\n' },
    rule: 'SL014',
    at: ['templates/a.tmpl', 1, 6],
    message: /does not work inside a .tmpl file/,
  },
  {
    name: 'template not found',
    files: {
      'scenario/create/main.yml': task('core.file.rendered', '      path: /etc/x\n      template: nope.tmpl\n'),
    },
    rule: 'SL015',
    at: ['scenario/create/main.yml', 6, 17],
    message: /template "nope.tmpl" not found/,
  },
  {
    name: 'template outside templates/',
    files: {
      'scenario/create/main.yml': task(
        'core.file.rendered',
        '      path: /etc/x\n      template: ../../etc/passwd.tmpl\n',
      ),
    },
    rule: 'SL015',
    at: ['scenario/create/main.yml', 6, 17],
    message: /points outside templates/,
  },
  {
    name: 'requisite to a later task',
    files: {
      'scenario/create/main.yml': `tasks:\n  - name: a\n    module: core.pkg.installed\n    params: {name: x}\n    require: b\n  - name: b\n    module: core.pkg.installed\n    params: {name: y}\n`,
    },
    rule: 'SL016',
    at: ['scenario/create/main.yml', 5, 14],
    message: /requisite "b" names this task or a later one/,
  },
  {
    name: 'requisite to no task',
    files: { 'scenario/create/main.yml': task('core.pkg.installed', '      name: x\n', '    onchanges: [ghost]\n') },
    rule: 'SL016',
    at: ['scenario/create/main.yml', 6, 17],
    message: /requisite "ghost" names no task/,
  },
  {
    name: 'reserved register name',
    files: { 'scenario/create/main.yml': task('core.pkg.installed', '      name: x\n', '    register: state\n') },
    rule: 'SL016',
    at: ['scenario/create/main.yml', 6, 15],
    message: /register name "state" is reserved/,
  },
  {
    name: 'unterminated ${',
    files: { 'scenario/create/main.yml': task('core.pkg.installed', '      name: "x-${input.a"\n') },
    rule: 'SL017',
    at: ['scenario/create/main.yml', 5, 16],
    message: /unterminated/,
  },
];

describe('service checks: tasks, one finding per rule', function () {
  caseTests(CASES);
});
