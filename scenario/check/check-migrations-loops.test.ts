/**
 * One case per rule and per error of migrations, conditions and loops, the practices the checker
 * warns of (SL027) and host selectors (test/lint/check-cases.ts).
 */
import { caseTests, task, type Case } from '../../test/lint/check-cases';

const CASES: Case[] = [
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

describe('service checks: migrations, conditions, loops and practices, one finding per rule', function () {
  caseTests(CASES);
});
