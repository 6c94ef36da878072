/**
 * One case per rule and per error: a service that breaks exactly one thing,
 * and the finding it must produce (rule, file:line:col, message, a fix).
 */
import * as assert from 'node:assert/strict';
import { fixtureService } from '../../test/lint/paths';
import { loadServiceFromDir } from '../load/dir';
import { tempService, cleanupTempServices, MINIMAL_CREATE, MINIMAL_SERVICE } from '../../test/lint/temp-service';
import type { RenderError } from '../errors';
import { resolveGate } from '../gate';

const task = (module: string, params: string, extra = ''): string =>
  `tasks:\n  - name: t\n    module: ${module}\n    params:\n${params}${extra}`;

interface Case {
  name: string;
  files: Record<string, string>;
  rule: string;
  at: [string, number, number];
  message: RegExp;
  base?: Record<string, string>;
}

const CASES: Case[] = [
  {
    name: 'missing service.yml',
    files: { 'service.yml': '' },
    rule: 'SL003',
    at: ['service.yml', 1, 1],
    message: /service.yml is empty/,
  },
  {
    name: 'service.yml without state_schema_version',
    files: { 'service.yml': 'name: demo\n' },
    rule: 'SL003',
    at: ['service.yml', 1, 1],
    message: /missing required key "state_schema_version"/,
  },
  {
    name: 'service.yml with a version field',
    files: { 'service.yml': 'name: demo\nstate_schema_version: 1\nversion: "1.0"\n' },
    rule: 'SL004',
    at: ['service.yml', 3, 1],
    message: /version is its git ref/,
  },
  {
    name: 'state_schema_version not an integer',
    files: { 'service.yml': 'name: demo\nstate_schema_version: "two"\n' },
    rule: 'SL003',
    at: ['service.yml', 2, 23],
    message: /state_schema_version must be an integer/,
  },
  {
    name: 'missing create scenario',
    files: { 'scenario/other/main.yml': MINIMAL_CREATE },
    base: { 'service.yml': MINIMAL_SERVICE },
    rule: 'SL005',
    at: ['scenario/create/main.yml', 1, 1],
    message: /scenario\/create\/main.yml is missing/,
  },
  {
    name: 'empty scenario file',
    files: { 'scenario/create/main.yml': '' },
    rule: 'SL007',
    at: ['scenario/create/main.yml', 1, 1],
    message: /is empty/,
  },
  {
    name: 'migrations missing',
    files: {
      'service.yml': 'name: demo\nstate_schema_version: 3\n',
      'migrations/2.yml': 'state_changes:\n  sets:\n    a: 1\n',
    },
    rule: 'SL006',
    at: ['service.yml', 2, 23],
    message: /migrations\/3.yml is missing/,
  },
  {
    name: 'YAML syntax error',
    files: { 'scenario/create/main.yml': 'tasks:\n  - name: [x\n' },
    rule: 'SL001',
    at: ['scenario/create/main.yml', 3, 1],
    message: /YAML syntax error/,
  },
  {
    name: 'unknown scenario key',
    files: {
      'scenario/create/main.yml': `tasks:\n  - name: t\n    module: core.pkg.installed\n    params: {name: x}\n    retry: 3\n`,
    },
    rule: 'SL007',
    at: ['scenario/create/main.yml', 5, 5],
    message: /unknown key "retry" in tasks\[0\]/,
  },
  {
    name: 'task without module',
    files: { 'scenario/create/main.yml': 'tasks:\n  - name: t\n' },
    rule: 'SL007',
    at: ['scenario/create/main.yml', 2, 5],
    message: /missing required key "module" in tasks\[0\]/,
  },
  {
    name: 'serial of the wrong shape',
    files: { 'scenario/create/main.yml': `serial: fast\n${task('core.pkg.installed', '      name: x\n')}` },
    rule: 'SL007',
    at: ['scenario/create/main.yml', 1, 9],
    message: /serial has the wrong shape/,
  },
  {
    name: 'max_failed of the wrong shape',
    files: { 'scenario/create/main.yml': `max_failed: "half"\n${task('core.pkg.installed', '      name: x\n')}` },
    rule: 'SL007',
    at: ['scenario/create/main.yml', 1, 13],
    message: /max_failed has the wrong shape/,
  },
  {
    name: 'max_failed_unknown without max_failed',
    files: {
      'scenario/create/main.yml': `max_failed_unknown: false\n${task('core.pkg.installed', '      name: x\n')}`,
    },
    rule: 'SL031',
    at: ['scenario/create/main.yml', 1, 21],
    message: /`max_failed_unknown:` without `max_failed:`/,
  },
  {
    name: 'max_failed in destroy',
    files: { 'scenario/destroy/main.yml': `max_failed: 2\n${task('core.pkg.installed', '      name: x\n')}` },
    rule: 'SL031',
    at: ['scenario/destroy/main.yml', 1, 13],
    message: /a destroy has no failure budget/,
  },
  {
    name: 'gate without serial',
    files: { 'scenario/create/main.yml': `gate:\n  approval: true\n${task('core.pkg.installed', '      name: x\n')}` },
    rule: 'SL032',
    at: ['scenario/create/main.yml', 2, 3],
    message: /`gate:` without `serial:`/,
  },
  {
    name: 'gate waiting for nothing',
    files: {
      'scenario/create/main.yml': `serial: 1\ngate:\n  approval: false\n${task('core.pkg.installed', '      name: x\n')}`,
    },
    rule: 'SL032',
    at: ['scenario/create/main.yml', 3, 3],
    message: /waits for nothing/,
  },
  {
    name: 'gate timeout that is no duration',
    files: {
      'scenario/create/main.yml': `serial: 1\ngate:\n  health: "true"\n  timeout: 2d\n${task('core.pkg.installed', '      name: x\n')}`,
    },
    rule: 'SL007',
    at: ['scenario/create/main.yml', 4, 12],
    message: /timeout/,
  },
  {
    name: 'gate interval below the bound',
    files: {
      'scenario/create/main.yml': `serial: 1\ngate:\n  health: "true"\n  interval: 10ms\n${task('core.pkg.installed', '      name: x\n')}`,
    },
    rule: 'SL032',
    at: ['scenario/create/main.yml', 4, 13],
    message: /`gate: interval:` must be at least 100ms/,
  },
  {
    name: 'gate interval without health',
    files: {
      'scenario/create/main.yml': `serial: 1\ngate:\n  approval: true\n  interval: 5s\n${task('core.pkg.installed', '      name: x\n')}`,
    },
    rule: 'SL032',
    at: ['scenario/create/main.yml', 4, 13],
    message: /without `health:`/,
  },
  {
    name: 'gate health of bad CEL',
    files: {
      'scenario/create/main.yml': `serial: 1\ngate:\n  health: "soulprint.self.up &&"\n${task('core.pkg.installed', '      name: x\n')}`,
    },
    rule: 'SL011',
    at: ['scenario/create/main.yml', 3, 32],
    message: /CEL syntax error/,
  },
  {
    name: 'gate health reading an unregistered name',
    files: {
      'scenario/create/main.yml': `serial: 1\ngate:\n  health: "web.ok"\n${task('core.pkg.installed', '      name: x\n')}`,
    },
    rule: 'SL012',
    at: ['scenario/create/main.yml', 3, 12],
    message: /web/,
  },
  {
    name: 'gate health not a boolean',
    files: {
      'scenario/create/main.yml': `serial: 1\ngate:\n  health: "input.n"\ninput:\n  n:\n    type: integer\n    default: 1\n${task('core.pkg.installed', '      name: x\n')}`,
    },
    rule: 'SL022',
    at: ['scenario/create/main.yml', 3, 11],
    message: /must be a boolean/,
  },
  {
    name: 'unknown input type',
    files: {
      'scenario/create/main.yml': `input:\n  n:\n    type: float\n${task('core.pkg.installed', '      name: x\n')}`,
    },
    rule: 'SL007',
    at: ['scenario/create/main.yml', 3, 11],
    message: /input.n.type must be one of/,
  },
  {
    name: 'default does not match type',
    files: {
      'scenario/create/main.yml': `input:\n  n:\n    type: integer\n    default: "5"\n${task('core.pkg.installed', '      name: x\n')}`,
    },
    rule: 'SL008',
    at: ['scenario/create/main.yml', 4, 14],
    message: /default of input "n" is a string, but its type is integer/,
  },
  {
    name: 'default breaks the schema inside it',
    files: {
      'scenario/create/main.yml': `input:\n  ups:\n    type: list\n    items: {type: map, required: [host, port]}\n    default: [{host: a, port: 1}, {host: b}]\n${task('core.pkg.installed', '      name: x\n')}`,
    },
    rule: 'SL008',
    at: ['scenario/create/main.yml', 5, 14],
    message: /default of input "ups" breaks its schema: input.ups\[1\].port is required/,
  },
  {
    name: 'schema keyword that cannot apply to the type',
    files: {
      'scenario/create/main.yml': `input:\n  port:\n    type: integer\n    pattern: "^[0-9]+$"\n${task('core.pkg.installed', '      name: x\n')}`,
    },
    rule: 'SL007',
    at: ['scenario/create/main.yml', 2, 3],
    message: /input "port": input.port: `pattern` applies to a string only, not to integer/,
  },
  {
    name: 'unknown schema keyword inside items',
    files: {
      'scenario/create/main.yml': `input:\n  ups:\n    type: list\n    items: {type: map, minItems: 1}\n${task('core.pkg.installed', '      name: x\n')}`,
    },
    rule: 'SL007',
    at: ['scenario/create/main.yml', 4, 24],
    message: /minItems/,
  },
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
  {
    name: 'migration without sets',
    files: { 'service.yml': 'name: demo\nstate_schema_version: 2\n', 'migrations/2.yml': 'description: nothing\n' },
    rule: 'SL018',
    at: ['migrations/2.yml', 1, 1],
    message: /missing required key "state_changes"/,
  },
  {
    name: 'migration that changes nothing',
    files: { 'service.yml': 'name: demo\nstate_schema_version: 2\n', 'migrations/2.yml': 'state_changes: {}\n' },
    rule: 'SL018',
    at: ['migrations/2.yml', 1, 16],
    message: /migrations\/2.yml changes nothing: state_changes has no sets, unsets or moves/,
  },
  {
    name: 'migration that unsets a key and sets one inside it',
    files: {
      'service.yml': 'name: demo\nstate_schema_version: 2\n',
      'migrations/2.yml': 'state_changes:\n  unsets: [motd]\n  sets:\n    motd.message: hi\n',
    },
    rule: 'SL018',
    at: ['migrations/2.yml', 4, 5],
    message: /state key "motd.message" is set and "motd" is unset in the same migration/,
  },
  {
    name: 'migration that moves a key onto one it sets',
    files: {
      'service.yml': 'name: demo\nstate_schema_version: 2\n',
      'migrations/2.yml': 'state_changes:\n  moves:\n    message: motd.message\n  sets:\n    motd.message: hi\n',
    },
    rule: 'SL018',
    at: ['migrations/2.yml', 5, 5],
    message: /state key "motd.message" is set and "motd.message" is moved to in the same migration/,
  },
  {
    name: 'migration that unsets a key that is no key name',
    files: {
      'service.yml': 'name: demo\nstate_schema_version: 2\n',
      'migrations/2.yml': 'state_changes:\n  unsets: ["a..b"]\n',
    },
    rule: 'SL018',
    at: ['migrations/2.yml', 2, 12],
    message: /state_changes.unsets\[0\] must match pattern/,
  },
  {
    name: 'when that is not a boolean',
    files: { 'scenario/create/main.yml': task('core.pkg.installed', '      name: x\n', '    when: "1 + 2"\n') },
    rule: 'SL022',
    at: ['scenario/create/main.yml', 6, 11],
    message: /must be a boolean, but it is int/,
  },
  {
    name: 'loop that is no list (a number)',
    files: { 'scenario/create/main.yml': task('core.pkg.installed', '      name: x\n', '    loop: 3\n') },
    rule: 'SL007',
    at: ['scenario/create/main.yml', 6, 11],
    message: /loop has the wrong shape/,
  },
  {
    name: 'loop expression typed as a string',
    files: {
      'scenario/create/main.yml': `input:\n  n: {type: string, default: a}\n${task('core.pkg.installed', '      name: x\n', '    loop: input.n\n')}`,
    },
    rule: 'SL022',
    at: ['scenario/create/main.yml', 8, 11],
    message: /loop must be a list, but the expression is string/,
  },
  {
    name: 'loop reading a registered result',
    files: {
      'scenario/create/main.yml': `tasks:\n  - name: a\n    module: core.pkg.installed\n    params: {name: x}\n    register: a_res\n  - name: b\n    module: core.pkg.installed\n    params: {name: "\${item}"}\n    loop: "[a_res.changed]"\n`,
    },
    rule: 'SL012',
    at: ['scenario/create/main.yml', 9, 13],
    message: /Unknown variable: a_res/,
  },
  {
    name: 'item outside a loop',
    files: { 'scenario/create/main.yml': task('core.pkg.installed', '      name: "${item}"\n') },
    rule: 'SL012',
    at: ['scenario/create/main.yml', 5, 16],
    message: /Unknown variable: item/,
  },
  {
    name: 'register named item',
    files: { 'scenario/create/main.yml': task('core.pkg.installed', '      name: x\n', '    register: item\n') },
    rule: 'SL016',
    at: ['scenario/create/main.yml', 6, 15],
    message: /register name "item" is reserved/,
  },
  {
    name: 'restart without a trigger',
    files: { 'scenario/create/main.yml': task('core.service.restarted', '      name: nginx\n') },
    rule: 'SL027',
    at: ['scenario/create/main.yml', 3, 13],
    message: /core.service.restarted acts every time it runs, and this task has no trigger/,
  },
  {
    name: 'shell command split in argv',
    files: { 'scenario/create/main.yml': task('core.cmd.run', '      argv: [nginx, -t]\n      shell: true\n') },
    rule: 'SL027',
    at: ['scenario/create/main.yml', 5, 13],
    message: /with `shell: true` takes the shell command as one string/,
  },
  {
    name: 'a version for a list of packages',
    files: { 'scenario/create/main.yml': task('core.pkg.installed', '      name: [a1, b1]\n      version: "1.0"\n') },
    rule: 'SL027',
    at: ['scenario/create/main.yml', 6, 16],
    message: /`version` pins one package, but `name` is a list/,
  },
  {
    name: 'removing a system folder',
    files: { 'scenario/create/main.yml': task('core.dir.absent', '      path: /etc/\n') },
    rule: 'SL027',
    at: ['scenario/create/main.yml', 5, 13],
    message: /would remove \/etc\/, a system folder/,
  },
  {
    name: 'a shell as validate',
    files: {
      'scenario/create/main.yml': task(
        'core.file.present',
        '      path: /etc/x\n      content: y\n      validate: [sh, -c, "nginx -t -c %s"]\n',
      ),
    },
    rule: 'SL027',
    at: ['scenario/create/main.yml', 7, 17],
    message: /`validate` runs a shell/,
  },
  {
    name: 'invalid host selector',
    files: { 'scenario/create/main.yml': `on: ["web 1"]\n${task('core.pkg.installed', '      name: x\n')}` },
    rule: 'SL007',
    at: ['scenario/create/main.yml', 1, 5],
    message: /invalid host selector "web 1"/,
  },
];

describe('service checks: one finding per rule', function () {
  after(cleanupTempServices);

  for (const c of CASES) {
    it(`${c.rule}: ${c.name}`, function () {
      const errors = loadServiceFromDir(c.base ? tempService(c.files, c.base) : tempService(c.files)).errors;
      const hit = errors.find((e: RenderError) => e.rule === c.rule && c.message.test(e.message));
      assert.ok(
        hit,
        `no ${c.rule} matching ${c.message} in:\n${errors.map((e) => `${e.file}:${e.line}:${e.col} ${e.rule} ${e.message}`).join('\n')}`,
      );
      assert.deepEqual([hit.file, hit.line, hit.col], c.at);
      assert.ok(hit.fix && hit.fix.length > 5, 'every finding carries a fix');
    });
  }

  it('a gate reading registered results, facts and inputs is clean, and resolves to the run gate', function () {
    const text =
      "serial: 2\ngate:\n  health: 'pkg.ok && soulprint.self.covens.size() >= 0 && input.n > 0'\n  timeout: 90s\n  interval: 500ms\n  approval: true\n" +
      'input:\n  n: {type: integer, default: 1}\n' +
      'tasks:\n  - name: pkg\n    module: core.pkg.installed\n    params: {name: curl}\n    register: pkg\n';
    const loaded = loadServiceFromDir(tempService({ 'scenario/create/main.yml': text }));
    assert.deepEqual(loaded.errors, []);
    assert.deepEqual(resolveGate(loaded.scenarios.get('create')?.gate), {
      health: 'pkg.ok && soulprint.self.covens.size() >= 0 && input.n > 0',
      timeoutMs: 90_000,
      intervalMs: 500,
      approval: true,
    });
    const approvalOnly = loadServiceFromDir(
      tempService({ 'scenario/create/main.yml': text.replace(/  health:.*\n  timeout: 90s\n  interval: 500ms\n/, '') }),
    );
    assert.deepEqual(approvalOnly.errors, []);
    assert.deepEqual(resolveGate(approvalOnly.scenarios.get('create')?.gate), {
      timeoutMs: 60_000,
      intervalMs: 2_000,
      approval: true,
    });
  });

  it('the motd example service is clean', function () {
    assert.deepEqual(loadServiceFromDir(fixtureService('motd')).errors, []);
  });

  it('the documented module parameters are accepted: a package version, file owner/group/mode and a validate command', function () {
    const tasks =
      'tasks:\n  - name: pkg\n    module: core.pkg.installed\n    params:\n      name: nginx\n      version: "1.22.1-9"\n' +
      '  - name: conf\n    module: core.file.present\n    params:\n      path: /etc/app.conf\n      content: "x"\n      owner: root\n      group: "0"\n      mode: "0640"\n      validate: [/usr/bin/app, --check, "%s"]\n';
    assert.deepEqual(loadServiceFromDir(tempService({ 'scenario/create/main.yml': tasks })).errors, []);
    const noPlaceholder = loadServiceFromDir(
      tempService({ 'scenario/create/main.yml': tasks.replace('"%s"', '/etc/app.conf') }),
    ).errors;
    assert.equal(noPlaceholder.length, 1, JSON.stringify(noPlaceholder));
    assert.equal(noPlaceholder[0]!.rule, 'SL010');
    assert.match(noPlaceholder[0]!.message, /validate/);
  });

  it('a loop is clean whether or not its task reads item; a looped register is a list to later tasks', function () {
    const tasks =
      'input:\n  names: {type: list, default: [a, b]}\ntasks:\n' +
      '  - name: same\n    module: core.pkg.installed\n    params: {name: curl}\n    loop: input.names\n' +
      '  - name: each\n    module: core.file.rendered\n    loop: input.names\n    when: index < 5 && item != "z"\n    params: {path: "/etc/${item}", template: t.tmpl}\n    register: files\n' +
      '  - name: after\n    module: core.pkg.installed\n    params: {name: x}\n    when: files.exists(f, f.changed) && files[0].ok\n';
    assert.deepEqual(
      loadServiceFromDir(
        tempService({ 'scenario/create/main.yml': tasks, 'templates/t.tmpl': '{{ .item }} {{ .index }}\n' }),
      ).errors,
      [],
    );
    // Without loop:, the template's .item is a field no vars provide (SL025).
    const plain = tasks.replace(
      '    loop: input.names\n    when: index < 5 && item != "z"\n    params: {path: "/etc/${item}"',
      '    params: {path: "/etc/x"',
    );
    assert.deepEqual(
      loadServiceFromDir(
        tempService({ 'scenario/create/main.yml': plain, 'templates/t.tmpl': '{{ .item }} {{ .index }}\n' }),
      ).errors.map((e) => e.message.replace(/.* reads (\.\w+).*/, '$1')),
      ['.item', '.index'],
    );
  });

  it('the core library in use is clean: a reload on a trigger, a guarded command, accounts, a folder, a link, removals, package lists', function () {
    const tasks =
      'tasks:\n  - name: pkgs\n    module: core.pkg.installed\n    params: {name: [nginx-light, less]}\n' +
      '  - name: old\n    module: core.pkg.removed\n    params: {name: ed, purge: true}\n' +
      '  - name: grp\n    module: core.group.present\n    params: {name: web, gid: 2001}\n' +
      '  - name: usr\n    module: core.user.present\n    params: {name: web, uid: 2001, group: web, home: /srv/web, shell: /usr/sbin/nologin, system: true}\n' +
      '  - name: www\n    module: core.dir.present\n    params: {path: /srv/web/www, mode: "0750", owner: web, group: web}\n' +
      '  - name: conf\n    module: core.file.present\n    params: {path: /etc/nginx/sites-available/web, content: "x", validate: [/usr/sbin/nginx, -t, -c, "%s"]}\n' +
      '  - name: link\n    module: core.link.present\n    params: {path: /etc/nginx/sites-enabled/web, target: /etc/nginx/sites-available/web}\n' +
      '  - name: gone\n    module: core.file.absent\n    params: {path: /etc/nginx/sites-enabled/default}\n' +
      '  - name: reload\n    module: core.service.reloaded\n    params: {name: nginx}\n    onchanges: [conf, link]\n' +
      '  - name: up\n    module: core.service.running\n    params: {name: nginx, enabled: true}\n' +
      '  - name: migrate\n    module: core.cmd.run\n    params: {argv: [/usr/bin/app, migrate], cwd: /srv/web, env: {MODE: prod}, timeout: 600, creates: /srv/web/.migrated, unless: [/usr/bin/app, check]}\n' +
      '  - name: sh\n    module: core.cmd.run\n    params: {argv: ["echo done > /srv/web/done"], shell: true, removes: /srv/web/todo}\n' +
      '  - name: olddir\n    module: core.dir.absent\n    params: {path: /srv/old}\n' +
      '  - name: nouser\n    module: core.user.absent\n    params: {name: old, remove_home: true}\n' +
      '  - name: nogroup\n    module: core.group.absent\n    params: {name: old}\n' +
      '  - name: down\n    module: core.service.stopped\n    params: {name: apache2, enabled: false}\n' +
      '  - name: bounce\n    module: core.service.restarted\n    params: {name: nginx}\n    onchanges: pkgs\n';
    assert.deepEqual(loadServiceFromDir(tempService({ 'scenario/create/main.yml': tasks })).errors, []);
  });

  it('a service with no problems has no findings', function () {
    assert.deepEqual(loadServiceFromDir(tempService({})).errors, []);
  });
});
