// How keeperctl shows a plan: the plan of an upgrade with its migrations, the state keys they change
// and the two commands to run next (it is not applied as such); a plan that failed to render with
// its render errors (it has no hosts to show); an ordinary ready plan pointing at apply-plan.
import assert from 'node:assert/strict';
import { nextSteps, planText, type Plan } from './plan-view';

const base: Plan = {
  plan_id: 'shop.upgrade.plan.1',
  incarnation: 'shop',
  operation: 'update',
  status: 'ready',
  error: null,
  expires_at: '2026-11-27T00:00:00.000Z',
  summary: { would_change: 0 },
  hosts: [],
};

describe('keeperctl plan view', () => {
  it('an upgrade plan: labelled upgrade, the migrations and changed state keys, upgrade then run as next steps', () => {
    const p: Plan = {
      ...base,
      operation: 'upgrade',
      upgrade: {
        version: 'v2',
        from_version: 1,
        to_version: 2,
        migrations: [2],
        state_before: { port: 80, root: '/srv' },
        state_after: { root: '/srv', app: { port: 80 } },
        operation: 'update',
      },
    };
    const text = planText(p);
    assert.match(text, /^plan shop\.upgrade\.plan\.1 of shop \(upgrade\): ready$/m);
    assert.match(
      text,
      /^upgrade to v2: state_schema_version 1 -> 2, migrations 2; the hosts show what update at v2 would change$/m,
    );
    assert.match(text, /^ {2}state app: \(none\) -> \{"port":80\}$/m);
    assert.match(text, /^ {2}state port: 80 -> \(none\)$/m);
    assert.match(text, /^0 step\(s\) would change at v2, after the upgrade$/m);
    assert.doesNotMatch(text, /can be applied/, 'an upgrade plan is not applied as such');
    assert.doesNotMatch(text, /state root/, 'unchanged keys are not listed');
    assert.equal(
      nextSteps(p),
      'this plan is a preview and is not applied: upgrade the state with: keeperctl incarnations upgrade shop --version v2\n' +
        'then apply the files of v2 with: keeperctl run shop update\n',
    );
  });

  it('a failed plan prints its render errors with file:line:col, rule and fix; no next step', () => {
    const p: Plan = {
      ...base,
      plan_id: 'shop.update.plan.2',
      status: 'failed',
      error: 'render failed',
      render_errors: [
        {
          file: 'scenario/update/main.yml',
          line: 7,
          col: 12,
          rule: 'SL010',
          message: 'input.prot is not declared',
          fix: 'declare it',
        },
      ],
    };
    const text = planText(p);
    assert.match(text, /^plan shop\.update\.plan\.2 of shop \(update\): failed: render failed$/m);
    assert.match(
      text,
      /^ {2}scenario\/update\/main\.yml:7:12 SL010: input\.prot is not declared \(fix: declare it\)$/m,
    );
    assert.equal(nextSteps(p), '');
  });

  it('a ready plan of an operation points at apply-plan', () => {
    assert.equal(
      nextSteps({ ...base, plan_id: 'shop.update.plan.3' }),
      'apply exactly this plan with: keeperctl incarnations apply-plan shop shop.update.plan.3\n',
    );
  });
});
