// keeperctl's hint under a 409 names a command and flag that exist, read from the keeper's detail;
// no `--force` where the command has none.
import assert from 'node:assert/strict';
import { conflictHint } from './client';

describe('keeperctl 409 hints', () => {
  const cases: Array<[string, string]> = [
    [
      'incarnation shop is error_locked after run shop.create.1: boom',
      'fix the cause, then keeperctl incarnations unlock shop (add --retry to run the failed operation again)',
    ],
    [
      'incarnation shop is applying run shop.update.2; wait for it to finish',
      'follow it with: keeperctl incarnations run-report shop shop.update.2',
    ],
    [
      'plan shop.update.plan.3 is stale: it was made on the state of run a, and run b has committed since; make a new plan with POST /v1/incarnations/shop/plans',
      'make a new plan: keeperctl incarnations plan shop <operation>',
    ],
    [
      'service motd@v4 has no destroy operation (scenario/destroy/main.yml): pass ?force=true to remove the record of incarnation shop without running anything (its hosts keep what was applied)',
      'keeperctl incarnations delete shop --force',
    ],
    [
      'soul web-1 has an active bootstrap token (valid until 2026-11-27T00:00:00.000Z); ...',
      'keeperctl souls issue-token web-1 --force',
    ],
    [
      'version v5 of service shop was yanked at 2026-11-26T00:00:00.000Z by alice: broken; choose another version (keeperctl services versions shop)',
      'choose another version: keeperctl services versions shop',
    ],
  ];
  for (const [detail, hint] of cases) it(`"${detail.slice(0, 40)}…"`, () => assert.equal(conflictHint(detail), hint));

  it('any other 409 points at the detail and an existing command, never a --force', () => {
    const h = conflictHint('operator alice already exists');
    assert.doesNotMatch(h, /--force/);
    assert.match(h, /keeperctl incarnations get <name>/);
  });
});
