// A `changed_when` that overrides the module's answer is flagged in the run report (issue 31): the
// step's `changed_when` carries the expression when its verdict differs from what the soul's module
// said, and is null when the module's answer stands (an expression that agrees with it, or none).
// keeperctl's run-report says so too. Real keeper, Temporal, scenario engine and one real soul;
// the motd fixture service with one more operation whose file step claims it never changes.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import path from 'node:path';
import type { TestKeeper } from '../support/keeper';
import { repoRoot } from '../support/repo';
import { serviceRepo } from '../support/service-repo';
import { api, settled, startRunKeeper, startSouls, stopRunRig, tempDir, type TestSoul } from './keeper';

const QUIET = `description: Write the message, but report the file as never changed.
input:
  root:
    type: string
  message:
    type: string
tasks:
  - name: quiet file
    module: core.file.present
    params:
      path: "\${input.root}/etc/quiet"
      content: "\${input.message}\\n"
    changed_when: "false"
`;

describe('changed_when overrides in the run report', function () {
  this.timeout(240_000);
  let k: TestKeeper;
  let root: string;
  let souls: TestSoul[] = [];

  before(async () => {
    root = tempDir('changed-when-');
    const repo = serviceRepo({ fixture: 'motd' });
    repo.commit({ 'scenario/quiet/main.yml': QUIET }, 'an operation whose step never reports a change');
    repo.tag('v1', true);
    k = await startRunKeeper();
    souls = await startSouls(k, path.join(root, 'souls'), [['edge']]);
    const r = await api(k, 'POST', '/v1/services', { name: 'motd', git: repo.url, ref: 'v1' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const c = await api(k, 'POST', '/v1/incarnations', {
      name: 'cw',
      service: 'motd',
      covens: ['edge'],
      input: { root: path.join(root, 'out'), message: 'one', package: 'git' },
    });
    assert.equal(c.status, 202, JSON.stringify(c.body));
    assert.equal((await settled(k, 'cw')).status, 'ready');
  });
  after(() => stopRunRig({ souls, k, root }));

  async function runOf(operation: string, message: string): Promise<any> {
    const r = await api(k, 'POST', '/v1/incarnations/cw/runs', {
      operation,
      input: { root: path.join(root, 'out'), message },
      // The create's input has `package`, which neither operation declares.
      input_mode: 'replace',
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal((await settled(k, 'cw')).status, 'ready');
    return (await api(k, 'GET', `/v1/incarnations/cw/runs/${r.body.apply_id}`)).body;
  }
  /** keeperctl run-report as an operator would type it (a child process: the keeper runs in this one). */
  async function runReport(applyId: string): Promise<string> {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [path.join(repoRoot(), 'bin', 'keeperctl'), 'incarnations', 'run-report', 'cw', applyId],
      { env: { PATH: process.env['PATH'], HOME: root, KEEPER_URL: k.baseUrl, KEEPER_TOKEN: k.adminToken } },
    );
    return stdout;
  }
  const step = (report: any, name: string) => report.hosts[0].steps.find((s: any) => s.name === name);

  it('flags the step whose changed_when overrode the module: the file changed, the report says not changed and why', async () => {
    const report = await runOf('quiet', 'two');
    assert.equal(fs.readFileSync(path.join(root, 'out', 'etc', 'quiet'), 'utf8'), 'two\n', 'the file was written');
    const s = step(report, 'quiet file');
    assert.deepEqual([s.status, s.changed, s.changed_when], ['ok', false, 'false']);
    assert.equal(report.hosts[0].status, 'ok');

    // keeperctl's report names the override after the outcome.
    const ctl = await runReport(report.apply_id);
    const sid = souls[0]!.sid.replace(/\./g, '\\.');
    assert.match(
      ctl,
      new RegExp(
        `changed_when overrode the module's answer:\\n  ${sid} step \\d+ \\(quiet file\\): not changed by changed_when \`false\` \\(the module said changed\\)`,
      ),
    );
  });

  it('a changed_when that agrees with the module, and a step without one, are not flagged', async () => {
    const report = await runOf('update', 'three');
    // The fixture's update has `changed_when: result.changed`: the same verdict as the module's.
    const s = step(report, 'motd file');
    assert.deepEqual([s.status, s.changed, s.changed_when], ['changed', true, null]);
    const again = await runOf('quiet', 'two');
    assert.equal(step(again, 'quiet file').changed_when, null, 'nothing to change: the module said unchanged too');
    const ctl = await runReport(report.apply_id);
    assert.doesNotMatch(ctl, /changed_when/);
  });
});
