// The failure summary keeperctl prints after a failed run: the failed_when verdict the keeper
// recorded under the module's answer is shown, not cut off at the first line.
import assert from 'node:assert/strict';
import { block, failureLines, fromReport, stepLine, type RunReport } from './follow';

describe('keeperctl failure summary', () => {
  it('shows the failed_when reason of a failed step', () => {
    const r: RunReport = {
      apply_id: 'shop.update.1',
      incarnation: 'shop',
      operation: 'update',
      status: 'failed',
      phase: 'done',
      error: '1 host(s) failed',
      render_errors: null,
      hosts: [
        {
          sid: 'web-1',
          status: 'failed',
          reason: null,
          steps: [
            {
              index: 0,
              name: 'health',
              status: 'failed',
              changed: false,
              output: 'ran /bin/true\nfailed_when: `result.rc == 0` is true (result.rc = 0)',
            },
          ],
        },
      ],
    };
    assert.deepEqual(failureLines(r), [
      'error: 1 host(s) failed',
      'web-1 step 0 (health): failed: ran /bin/true',
      '  failed_when: `result.rc == 0` is true (result.rc = 0)',
    ]);
  });

  const failedAfterChanges = (output: string): RunReport => ({
    apply_id: 'pg.create.1',
    incarnation: 'pg',
    operation: 'create',
    status: 'failed',
    phase: 'done',
    error: null,
    render_errors: null,
    hosts: [
      {
        sid: 'db-1',
        status: 'failed',
        reason: null,
        steps: [
          ...[0, 1, 2, 3].map((index) => ({
            index,
            name: `s${index}`,
            status: 'changed',
            changed: true,
            output: 'done',
          })),
          { index: 4, name: 'restart', status: 'failed', changed: false, output },
        ],
      },
      {
        sid: 'db-2',
        status: 'ok',
        reason: null,
        steps: [{ index: 0, name: 's0', status: 'ok', changed: false, output: '' }],
      },
    ],
  });

  it("shows a failed step's whole output, indented under its first line", () => {
    const out =
      'restarted postgresql@15-main: exit 1\nstderr:\nJob failed.\nFATAL: configuration file "/etc/postgresql/15/main/postgresql.conf" contains errors\n';
    assert.deepEqual(failureLines(failedAfterChanges(out)), [
      'db-1 step 4 (restart): failed: restarted postgresql@15-main: exit 1',
      '  stderr:',
      '  Job failed.',
      '  FATAL: configuration file "/etc/postgresql/15/main/postgresql.conf" contains errors',
    ]);
  });

  it('caps a long output: its end is shown, and where to read all of it', () => {
    const out = ['head', ...Array.from({ length: 100 }, (_, i) => `line ${i}`), 'x'.repeat(1000)].join('\n');
    const lines = failureLines(failedAfterChanges(out));
    assert.equal(lines.length, 41);
    assert.equal(lines[0], 'db-1 step 4 (restart): failed: head');
    assert.equal(lines[1], '  ... 62 lines cut (all of it: keeperctl incarnations run-report pg pg.create.1 -o json)');
    assert.equal(lines[2], '  line 62');
    assert.equal(lines[40], `  ${'x'.repeat(400)}... (line cut)`);
  });

  it('counts the changed steps of a host that failed after them', () => {
    const p = fromReport(failedAfterChanges('boom'));
    assert.equal(stepLine(p), 'steps 6: changed 4 (on 1 host), failed 1');
    assert.deepEqual(block(p, 1000, 24).slice(1, 3), [
      'hosts 2/2 done: changed 0, ok 1, failed 1, unknown 0, skipped 0',
      'steps 6: changed 4 (on 1 host), failed 1',
    ]);
  });
});
