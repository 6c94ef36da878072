// applyHost's decisions with a fake soul (the sender) and the real CEL evaluator: what is sent,
// what each step reports, and what later expressions can read.
import assert from 'node:assert/strict';
import { evaluateExpression } from '../../scenario';
import type { PlanStep } from '../../scenario/render/plan';
import { applyHost, SKIPPED_RESULT } from './apply-host';

function fakeSoul(answers: Record<number, { changed: boolean; ok?: boolean }>) {
  const sent: number[] = [];
  return {
    sent,
    sender: {
      isConnected: () => true,
      async sendStep(_sid: string, step: { stepIndex: number }) {
        sent.push(step.stepIndex);
        const a = answers[step.stepIndex] ?? { changed: false };
        const now = new Date();
        return {
          changed: a.changed,
          ok: a.ok ?? true,
          output: `step ${step.stepIndex}`,
          startedAt: now,
          finishedAt: now,
          replayed: false,
        };
      },
    },
  };
}

const step = (index: number, extra: Partial<PlanStep> = {}): PlanStep => ({
  index,
  name: `s${index}`,
  module: 'core.file.present',
  params: {},
  ...extra,
});

async function run(
  steps: PlanStep[],
  answers: Record<number, { changed: boolean; ok?: boolean }>,
  opts: { input?: Record<string, unknown>; owed?: Set<number> } = {},
) {
  const soul = fakeSoul(answers);
  const out = await applyHost({
    applyId: 'a.create.1',
    sid: 'h1',
    steps,
    sender: soul.sender,
    evaluate: evaluateExpression,
    stepTimeoutMs: 1000,
    signal: new AbortController().signal,
    context: { input: opts.input ?? {}, state: {}, soulprint: { self: {} } },
    ...(opts.owed ? { owed: opts.owed } : {}),
  });
  return {
    ...out,
    sent: soul.sent,
    status: out.status,
    byIndex: Object.fromEntries(out.steps.map((r) => [r.step_index, r])),
  };
}

describe('applyHost', () => {
  it('a step left out at render is reported skipped with its reason, registers a skipped result, and counts as succeeded for require', async () => {
    const r = await run(
      [
        step(0, { skip: 'on', register: 'extra' }),
        step(1, { when: 'extra.skipped && !extra.changed && extra.ok && !extra.failed', require: [0] }),
      ],
      { 1: { changed: true } },
    );
    assert.deepEqual(r.sent, [1]);
    assert.equal(r.byIndex[0]!.status, 'skipped');
    assert.equal(r.byIndex[0]!.skip_reason, 'on');
    assert.equal(r.byIndex[1]!.status, 'changed');
    assert.deepEqual(SKIPPED_RESULT, { ok: true, changed: false, failed: false, skipped: true, output: '' });
  });

  it('a step skipped by its apply-time when: registers skipped too; a later step reads it', async () => {
    const r = await run(
      [step(0, { register: 'a' }), step(1, { when: 'a.changed', register: 'b' }), step(2, { when: 'b.skipped' })],
      {},
    );
    assert.deepEqual(r.sent, [0, 2]);
    assert.equal(r.byIndex[1]!.skip_reason, 'when');
  });

  it('failed_when reads the input it is given and names itself; the host reason lists what it changed', async () => {
    const r = await run(
      [step(0), step(1, { failed_when: 'input.broken' }), step(2)],
      { 0: { changed: true }, 1: { changed: true } },
      { input: { broken: true } },
    );
    assert.equal(r.status, 'failed');
    assert.match(r.byIndex[1]!.output, /failed_when: `input.broken` is true/);
    assert.equal(r.byIndex[2]!.skip_reason, 'earlier_failure');
    assert.match(r.reason!, /changed on this host in this run: step\(s\) 0 \(s0\), 1 \(s1\)/);
  });

  it('onchanges: runs when a trigger changed, or when owed by a locked run; else skipped', async () => {
    const none = await run([step(0), step(1, { onchanges: [0] })], {});
    assert.equal(none.byIndex[1]!.skip_reason, 'onchanges');
    const owed = await run([step(0), step(1, { onchanges: [0] })], {}, { owed: new Set([1]) });
    assert.deepEqual(owed.sent, [0, 1]);
    const changed = await run([step(0), step(1, { onchanges: [0] })], { 0: { changed: true } });
    assert.deepEqual(changed.sent, [0, 1]);
  });

  it('loop: the item steps register one list in item order; apply-time when and changed_when see item and index', async () => {
    const item = (i: number, extra: Partial<PlanStep> = {}): PlanStep =>
      step(i, {
        name: `site[${i}]`,
        register: 'sites',
        loop: { index0: i, length: 3, item: { name: `n${i}` } },
        ...extra,
      });
    const r = await run(
      [
        item(0),
        item(1, { when: 'item.name != "n1"' }),
        item(2, { changed_when: 'result.changed && index == 2' }),
        step(3, {
          when: 'size(sites) == 3 && sites[1].skipped && !sites[0].changed && sites[2].changed && sites.exists(s, s.changed)',
        }),
      ],
      { 0: { changed: false }, 2: { changed: true } },
    );
    assert.deepEqual(r.sent, [0, 2, 3]);
    assert.equal(r.byIndex[1]!.skip_reason, 'when');
    assert.equal(r.byIndex[2]!.status, 'changed');
  });

  it('loop: a task with no items here registers an empty list', async () => {
    const r = await run(
      [
        step(0, { name: 'site', register: 'sites', skip: 'loop', loop: { index0: 0, length: 0 } }),
        step(1, { when: 'size(sites) == 0' }),
      ],
      {},
    );
    assert.deepEqual(r.sent, [1]);
    assert.equal(r.byIndex[0]!.skip_reason, 'loop');
    assert.match(r.byIndex[0]!.output, /no items/);
  });
});
