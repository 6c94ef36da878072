// The plan-drift re-check before a plan is applied: a host whose check now differs from the plan's,
// or whose facts read by its render changed, is refused with every step skipped and the differences
// named; a host that still matches (facts its render never read may change) goes on (undefined), and
// the check ran under the plan's key; a plan stale on another host refuses this one unchecked.
import assert from 'node:assert/strict';
import type { StepRow } from '../../db/repos/runs';
import type { HostOutcome } from './apply-host';
import { refuseOnPlanDrift, type PlanCheck } from './dispatch-plan-check';

const row = (i: number, changed: boolean): StepRow => ({
  apply_id: 'plan-1',
  sid: 'h1',
  step_index: i,
  name: `s${i}`,
  module: 'core.file.present',
  status: changed ? 'changed' : 'ok',
  changed,
  output: '',
  attempts: 1,
  replayed: false,
  started_at: null,
  finished_at: null,
  skip_reason: null,
});
const outcome = (steps: StepRow[]): HostOutcome => ({
  status: 'ok',
  reason: null,
  steps,
  startedAt: new Date(),
  finishedAt: new Date(),
});

function check(o: {
  now: StepRow[];
  factsNow?: Record<string, unknown>;
  reads?: string[];
}): PlanCheck & { calls: number } {
  const c = {
    calls: 0,
    applyId: 'run-2',
    planId: 'plan-1',
    sid: 'h1',
    plan: {
      steps: [0, 1].map((i) => ({ index: i, name: `s${i}`, module: 'core.file.present', params: {} })),
      soulprint: { os_family: 'debian', covens: ['web'] },
      reads: o.reads === undefined ? null : { facts: o.reads },
    },
    planned: [row(0, false), row(1, true)],
    soul: { soulprint: o.factsNow ?? { os_family: 'debian' }, covens: ['web'] },
    checkAgain: async () => {
      c.calls++;
      return outcome(o.now);
    },
  };
  return c;
}

describe('plan-drift re-check', () => {
  it('lets a host that still matches the plan go on', async () => {
    const c = check({ now: [row(0, false), row(1, true)] });
    assert.equal(await refuseOnPlanDrift(c), undefined);
    assert.equal(c.calls, 1);
  });

  it('refuses a host whose step would now change differently, skipping every step', async () => {
    const r = await refuseOnPlanDrift(check({ now: [row(0, true), row(1, true)] }));
    assert.ok(r);
    assert.equal(r.status, 'failed');
    assert.match(r.reason!, /^drift since plan plan-1: step 0 \(s0\): .*nothing was applied on this host$/);
    assert.deepEqual(
      r.steps.map((s) => [s.apply_id, s.step_index, s.status, s.skip_reason]),
      [
        ['run-2', 0, 'skipped', 'drift'],
        ['run-2', 1, 'skipped', 'drift'],
      ],
    );
  });

  it('names each diff field that differs in readable words: digests shortened, no JSON, no unified text', async () => {
    const diffRow = (digest: string, mode: string): StepRow => ({
      ...row(0, true),
      diff: {
        content: { before: { digest, size: 12 }, after: { digest: 'b'.repeat(64), size: 20 }, unified: '-x\n+y\n' },
        mode: { from: mode, to: '0644' },
        owner: { from: 'root', to: 'root' },
      },
    });
    const c = check({ now: [diffRow('c'.repeat(64), '0600'), row(1, true)] });
    c.planned = [diffRow('a'.repeat(64), '0640'), row(1, true)];
    const r = await refuseOnPlanDrift(c);
    assert.equal(
      r?.reason,
      'drift since plan plan-1: step 0 (s0): ' +
        `content.before.digest: the plan saw ${'a'.repeat(12)}…, now ${'c'.repeat(12)}…, ` +
        'mode.from: the plan saw "0640", now "0600"; nothing was applied on this host',
    );
  });

  it('refuses a host whose facts changed since render (every fact, for a plan stored without its reads)', async () => {
    const r = await refuseOnPlanDrift(check({ now: [row(0, false), row(1, true)], factsNow: { os_family: 'rhel' } }));
    assert.match(r?.reason ?? '', /fact os_family: the plan rendered with "debian", now "rhel"/);
  });

  it('compares only the facts the render read: a fact it never read may change', async () => {
    const now = [row(0, false), row(1, true)];
    const factsNow = { os_family: 'debian', addresses: ['10.0.0.9'] };
    assert.equal(await refuseOnPlanDrift(check({ now, factsNow, reads: ['covens', 'os_family'] })), undefined);
    const r = await refuseOnPlanDrift(check({ now, factsNow, reads: ['addresses'] }));
    assert.match(r?.reason ?? '', /fact addresses: the plan rendered with nothing, now \["10\.0\.0\.9"\]/);
    const all = await refuseOnPlanDrift(check({ now, factsNow, reads: ['*'] }));
    assert.match(all?.reason ?? '', /fact addresses/);
  });

  it('a plan stale on any host refuses this one unchecked, every step skipped', async () => {
    const c = check({ now: [row(0, false), row(1, true)] });
    c.staleHosts = 'facts its render read have changed: host h2: fact hostname: the plan rendered with "a", now "b"';
    const r = await refuseOnPlanDrift(c);
    assert.equal(c.calls, 0, 'not checked again: nothing is sent to any host');
    assert.match(
      r?.reason ?? '',
      /^plan plan-1 is stale: .*host h2: fact hostname.*; nothing was applied on any host$/,
    );
    assert.deepEqual(
      r?.steps.map((s) => s.skip_reason),
      ['drift', 'drift'],
    );
  });
});
