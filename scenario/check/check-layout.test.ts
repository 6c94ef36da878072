/**
 * One case per rule and per error of a service's layout and run settings: service.yml, the
 * scenario files and keys, serial, max_failed, gate and the input schemas (test/lint/check-cases.ts).
 */
import { MINIMAL_CREATE, MINIMAL_SERVICE } from '../../test/lint/temp-service';
import { caseTests, task, type Case } from '../../test/lint/check-cases';

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
    name: '`output:` other than `safe`',
    files: {
      'scenario/create/main.yml': `tasks:\n  - name: t\n    module: core.cmd.run\n    params: {argv: [cat, /etc/x]}\n    output: shown\n`,
    },
    rule: 'SL007',
    at: ['scenario/create/main.yml', 5, 13],
    message: /output/,
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
];

describe('service checks: layout and run settings, one finding per rule', function () {
  caseTests(CASES);
});
