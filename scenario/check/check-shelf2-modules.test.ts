/**
 * soul-lint's check (SL010) of the second shelf's modules: core.systemd.unit, core.url.fetched,
 * core.archive.extracted and core.git.checkout, used as documented, are clean; bad params are refused
 * naming the parameter and the rule it breaks (the same check render makes before a run).
 */
import * as assert from 'node:assert/strict';
import { loadServiceFromDir } from '../load/dir';
import { tempService, cleanupTempServices } from '../../test/lint/temp-service';

const SUM = `sha256:${'0'.repeat(64)}`;
const good =
  'tasks:\n' +
  '  - name: tick service\n    module: core.systemd.unit\n    params:\n      name: tick.service\n      content: "[Service]\\nType=oneshot\\nExecStart=/usr/bin/true\\n"\n' +
  '  - name: tick timer\n    module: core.systemd.unit\n    params:\n      name: tick.timer\n      content: "[Timer]\\nOnCalendar=daily\\n[Install]\\nWantedBy=timers.target\\n"\n      enabled: true\n      state: started\n' +
  `  - name: download\n    module: core.url.fetched\n    params:\n      path: /opt/dl/app.tgz\n      url: https://example.org/app.tgz\n      checksum: "${SUM}"\n      mode: "0640"\n` +
  '  - name: unpack\n    module: core.archive.extracted\n    params:\n      src: /opt/dl/app.tgz\n      dest: /opt/app\n      creates: /opt/app/bin/app\n      strip_components: 1\n' +
  '  - name: source\n    module: core.git.checkout\n    params:\n      repo: https://git.example.org/ops/app.git\n      dest: /srv/app\n      ref: v1.2.0\n';

const errorsOf = (text: string) => loadServiceFromDir(tempService({ 'scenario/create/main.yml': text })).errors;

describe('service checks: the systemd unit, download, archive and git modules', function () {
  after(cleanupTempServices);

  it('used as documented, they are clean', function () {
    assert.deepEqual(errorsOf(good), []);
  });

  const bad: Array<[string, string, string, RegExp]> = [
    [
      'a unit state that is not started or stopped',
      'state: started',
      'state: running',
      /parameter "state" has an invalid value \(must match \^\(started\|stopped\)\$\)/,
    ],
    ['a unit named without its type', 'name: tick.timer', 'name: tick', /parameter "name" has an invalid value/],
    [
      'a download by ftp',
      'url: https://example.org/app.tgz',
      'url: ftp://example.org/app.tgz',
      /parameter "url" has an invalid value \(must match \^https\?:/,
    ],
    [
      'a checksum in md5',
      `checksum: "${SUM}"`,
      'checksum: "md5:0123"',
      /parameter "checksum" has an invalid value \(must match \^sha256:\[0-9a-f\]\{64\}\$\)/,
    ],
    ['a download without a checksum', `      checksum: "${SUM}"\n`, '', /missing required parameter "checksum"/],
    [
      'an archive into a relative folder',
      'dest: /opt/app\n',
      'dest: opt/app\n',
      /parameter "dest" has an invalid value/,
    ],
    [
      'a git transport that runs a command',
      'repo: https://git.example.org/ops/app.git',
      'repo: "ext::sh -c id"',
      /parameter "repo" has an invalid value/,
    ],
    ['a git ref that is an option', 'ref: v1.2.0', 'ref: --upload-pack=x', /parameter "ref" has an invalid value/],
  ];
  for (const [what, from, to, message] of bad) {
    it(`refuses ${what}, naming the parameter (SL010)`, function () {
      assert.ok(good.includes(from), from);
      const errors = errorsOf(good.replace(from, to));
      assert.equal(errors.length, 1, JSON.stringify(errors));
      assert.equal(errors[0]!.rule, 'SL010');
      assert.match(errors[0]!.message, message);
    });
  }
});
