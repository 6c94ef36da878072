import assert from 'node:assert/strict';
import Ajv from 'ajv';
import { checkSchema } from '../../common/schema-check';
import { MODULES, checkWireParams, wireSchema } from './index';

// The soul checks the params of each step it receives by walking the module's wire schema
// (common/schema-check.ts, no ajv in the soul); ajv, which render and soul-lint use, is the judge:
// for every params object below, both find the same errors with the same keyword, params and words.
const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });

function judged(module: string, params: unknown) {
  const v = ajv.compile(wireSchema(module)!);
  if (v(params)) return [];
  return (v.errors ?? [])
    .filter((e) => !e.schemaPath.includes('/contains/'))
    .map((e) => ({ instancePath: e.instancePath, keyword: e.keyword, params: e.params, message: e.message }))
    .sort(byText);
}

const byText = (a: unknown, b: unknown) => JSON.stringify(a).localeCompare(JSON.stringify(b));

const file = {
  path: '/etc/app/app.conf',
  content: 'x\n',
  mode: '0644',
  owner: 'root',
  group: '0',
  validate: ['/usr/bin/check', '%s'],
};
const cases: Array<[string, string, unknown]> = [
  ['a good package', 'core.pkg.installed', { name: 'nginx', version: '1:1.22.1-9' }],
  ['a package named like an option', 'core.pkg.installed', { name: '-oDebug::pkgProblemResolver=1' }],
  [
    'a package with an empty name and a 129-character version',
    'core.pkg.installed',
    { name: '', version: 'a'.repeat(129) },
  ],
  ['a package without a name, with an unknown key', 'core.pkg.installed', { nmae: 'curl' }],
  ['a package as a list', 'core.pkg.installed', ['curl']],
  ['a package name as a number', 'core.pkg.installed', { name: 7 }],
  ['a good file', 'core.file.present', file],
  ['a relative path climbing out', 'core.file.present', { ...file, path: 'etc/../../x' }],
  ['an absolute path with ..', 'core.file.present', { ...file, path: '/etc/app/../../root/.ssh/authorized_keys' }],
  ['a mode of 0999 and an owner with a space', 'core.file.present', { ...file, mode: '0999', owner: 'a b' }],
  ['a validate command without %s', 'core.file.present', { ...file, validate: ['/usr/bin/check', '--strict'] }],
  ['an empty validate command', 'core.file.present', { ...file, validate: [] }],
  [
    'a validate command of 65 words, one empty',
    'core.file.present',
    { ...file, validate: ['%s', '', ...Array.from({ length: 63 }, () => 'x')] },
  ],
  ['a validate command that is not a list', 'core.file.present', { ...file, validate: '/usr/bin/check %s' }],
  ['no content, no path', 'core.file.present', { mode: '0644' }],
  [
    'a rendered file as the soul receives it',
    'core.file.rendered',
    { path: '/etc/app/a.conf', content: 'rendered\n', mode: '0644' },
  ],
  [
    'a rendered file still carrying its template and vars',
    'core.file.rendered',
    { path: '/etc/app/a.conf', content: 'x', template: 'a.tmpl', vars: {} },
  ],
  ['a key with a slash and a tilde', 'core.file.present', { ...file, 'a/b~c': 1 }],
  ['a list of packages', 'core.pkg.installed', { name: ['nginx-light', 'less'] }],
  [
    'a list of packages with an option among them and an empty list',
    'core.pkg.removed',
    { name: ['ed', '--force-yes'], purge: 'yes' },
  ],
  ['no packages to remove', 'core.pkg.removed', { name: [] }],
  ['a running service, enabled', 'core.service.running', { name: 'nginx', enabled: true }],
  ['a service named like an option', 'core.service.stopped', { name: '--all', enabled: 'no' }],
  ['a restart with enabled (not its parameter)', 'core.service.restarted', { name: 'nginx', enabled: true }],
  ['a reload of a templated unit', 'core.service.reloaded', { name: 'getty@tty1.service' }],
  [
    'a command with every guard',
    'core.cmd.run',
    {
      argv: ['/usr/sbin/nginx', '-t'],
      cwd: '/srv',
      env: { A: 'b' },
      timeout: 30,
      creates: '/srv/x',
      removes: '/srv/y',
      unless: ['test', '-e', '/x'],
      onlyif: ['true'],
    },
  ],
  [
    'a command as a string, a timeout of 0 and a relative cwd',
    'core.cmd.run',
    { argv: 'nginx -t', timeout: 0, cwd: 'srv', shell: 'yes' },
  ],
  ['a command with an empty word and an empty guard', 'core.cmd.run', { argv: ['x', ''], unless: [] }],
  [
    'a user with every property',
    'core.user.present',
    {
      name: 'web',
      uid: 2001,
      group: 'web',
      groups: ['adm'],
      home: '/srv/web',
      shell: '/bin/sh',
      comment: 'Web',
      system: true,
      create_home: false,
    },
  ],
  [
    'a user with a negative uid, a numeric name and a comment with a colon',
    'core.user.present',
    { name: '1000', uid: -1, comment: 'a:b' },
  ],
  ['a user removed with its home', 'core.user.absent', { name: 'web', remove_home: true }],
  ['a group with a gid', 'core.group.present', { name: 'web', gid: 2001, system: false }],
  ['a group with a fractional gid and an option as name', 'core.group.absent', { name: '-f', gid: 1.5 }],
  ['a directory', 'core.dir.present', { path: '/srv/web', mode: '0750', owner: 'web', group: 'web', parents: false }],
  ['a link', 'core.link.present', { path: '/etc/nginx/sites-enabled/a', target: '../sites-available/a', force: true }],
  ['a link without a target', 'core.link.present', { path: '/etc/a', target: '' }],
  ['a file removed', 'core.file.absent', { path: '/etc/nginx/sites-enabled/old' }],
  ['a directory removed, relative', 'core.dir.absent', { path: 'srv/old' }],
  ['a group of 65 characters', 'core.file.present', { ...file, group: 'g'.repeat(65) }],
  [
    'a line with every param',
    'core.line.present',
    { path: '/etc/ssh/sshd_config', line: 'X 1', regexp: '^X ', insertafter: 'EOF', insertbefore: 'BOF', create: true },
  ],
  ['a line of two lines, relative', 'core.line.present', { path: 'etc/x', line: 'a\nb', regexp: '' }],
  ['a line removed', 'core.line.absent', { path: '/etc/x', regexp: '^#', line: 'x' }],
  ['a line removed, a number', 'core.line.absent', { path: '/etc/x', line: 5 }],
  ['a block', 'core.block.present', { path: '/etc/x', name: 'app', content: 'a\nb\n', marker: '; {mark} app' }],
  ['a block with a marker without {mark}', 'core.block.present', { path: '/etc/x', name: 'a\nb', marker: '# x' }],
  ['an ini key, a number and a boolean', 'core.ini.set', { path: '/etc/a.ini', section: 's', key: 'k', value: 5 }],
  [
    'an ini key with = and a list value',
    'core.ini.set',
    { path: '/etc/a.ini', section: '[s]', key: 'k=v', value: [1] },
  ],
  [
    'an ini key, a boolean',
    'core.ini.set',
    { path: '/etc/a.ini', key: 'k', value: true, create: false, spaces: false },
  ],
  ['a sysctl', 'core.sysctl.set', { name: 'net.ipv4.ip_forward', value: 1, file: '60-net' }],
  ['a sysctl with a path as file', 'core.sysctl.set', { name: 'ip_forward', value: '', file: '../x' }],
  [
    'a cron job',
    'core.cron.present',
    { name: 'backup', schedule: '*/5 * * * *', command: '/usr/local/bin/backup', user: 'www-data', env: { A: 'b' } },
  ],
  [
    'a cron job with a bad schedule and a dotted name',
    'core.cron.present',
    { name: 'a.b', schedule: '* * *', command: '' },
  ],
  ['a cron job removed', 'core.cron.absent', { name: 'backup' }],
  [
    'a timer unit',
    'core.systemd.unit',
    { name: 'backup.timer', content: '[Timer]\nOnCalendar=daily\n', enabled: true, state: 'started' },
  ],
  ['a unit without its type, a state of running', 'core.systemd.unit', { name: 'backup', state: 'running' }],
  ['a unit named like an option or a path', 'core.systemd.unit', { name: '../x.service', enabled: 'yes' }],
  [
    'a download',
    'core.url.fetched',
    {
      path: '/opt/a.tgz',
      url: 'https://example.org/a.tgz',
      checksum: `sha256:${'a'.repeat(64)}`,
      mode: '0644',
      timeout: 60,
    },
  ],
  ['a download by ftp with an md5', 'core.url.fetched', { path: '/opt/a', url: 'ftp://x/a', checksum: 'md5:abc' }],
  ['a download without a checksum', 'core.url.fetched', { path: '/opt/a', url: 'http://x/a' }],
  [
    'an archive',
    'core.archive.extracted',
    { src: '/opt/a.tgz', dest: '/opt/a', creates: '/opt/a/bin', strip_components: 1 },
  ],
  [
    'an archive into a relative folder',
    'core.archive.extracted',
    { src: '/opt/a.tgz', dest: 'opt', strip_components: -1 },
  ],
  ['a checkout', 'core.git.checkout', { repo: 'https://git.example.org/app.git', dest: '/srv/app', ref: 'v1.2' }],
  ['a checkout by scp-like url', 'core.git.checkout', { repo: 'git@example.org:ops/app.git', dest: '/srv/app' }],
  [
    'a checkout through ext:: with an option as ref',
    'core.git.checkout',
    { repo: 'ext::sh -c x', dest: '/srv/app', ref: '--upload-pack=x' },
  ],
];

describe("the soul's check of a step's params, against ajv", () => {
  it('covers every module', () => {
    assert.deepEqual(new Set(cases.map(([, m]) => m)), new Set(MODULES.keys()));
  });

  for (const [what, module, params] of cases) {
    it(`finds what ajv finds: ${what}`, () => {
      const ours = checkSchema(wireSchema(module)!, params).sort(byText);
      assert.deepEqual(ours, judged(module, params));
    });
  }

  it('says what is wrong in the words render uses', () => {
    assert.deepEqual(checkWireParams('core.pkg.installed', { name: '-oDebug' }), [
      {
        pointer: '/name',
        param: 'name',
        message: 'parameter "name" has an invalid value (must match ^[A-Za-z0-9][A-Za-z0-9+._:-]*$)',
      },
    ]);
    assert.deepEqual(checkWireParams('core.file.present', { ...file, validate: ['/usr/bin/check'] }), [
      {
        pointer: '/validate',
        param: 'validate',
        message: 'parameter "validate" must name the candidate file with %s in one of its arguments',
      },
    ]);
    assert.equal(checkWireParams('core.nothing.here', {}), null);
  });
});
