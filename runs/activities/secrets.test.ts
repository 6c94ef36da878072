import assert from 'node:assert/strict';
import { SecretText, revealJson } from '../../common/secret';
import { deriveHandleKey, signHandle } from '../../scenario/secrets/handles';
import type { PlanStep, StepSecret } from '../../scenario/render/plan';
import { resolvePlanSecrets, type DispatchSecrets } from './secrets';

const key = new Uint8Array(32).fill(7);
const applyId = 'web.create.abc-1234';
const db = { path: 'secret/keeper/services/web/db', field: 'password' };
const A = 'a.example.com';

/** A step whose content holds handle 0 for `ref`, signed as render signs it (for `sid`, step 0, run `binding`). */
function signed(
  content: string,
  ref = db,
  o: { sid?: string; binding?: string; index?: number; signKey?: Uint8Array } = {},
): PlanStep {
  const entry: StepSecret = signHandle(
    deriveHandleKey(o.signKey ?? key),
    { binding: o.binding ?? applyId, sid: o.sid ?? A, index: o.index ?? 0, n: 0 },
    ref.path,
    ref.field,
  );
  return { ...step(content), secrets: [entry] };
}

function store(fields: Record<string, Record<string, unknown>>, reads: string[] = []): DispatchSecrets {
  return {
    nonceKey: key,
    scenarioPrefix: 'secret/keeper/services/',
    reader: {
      async readFields(p) {
        reads.push(p);
        if (!(p in fields)) throw new Error('the secrets store at http://127.0.0.1:1 is unreachable');
        return fields[p]!;
      },
    },
  };
}
const step = (content: string): PlanStep => ({
  index: 0,
  name: 'conf',
  module: 'core.file.present',
  params: { path: '/etc/x', content },
});

describe('secrets at dispatch', function () {
  it("replaces the run's verified handles by secret-typed values that only the wire encoding reveals", async function () {
    const reads: string[] = [];
    const plans = new Map([
      [A, { steps: [signed('pw=«secret:0»\n')] }],
      ['b.example.com', { steps: [step('plain')] }],
    ]);
    const out = await resolvePlanSecrets(
      store({ [db.path]: { password: 'canary-dispatch-1' } }, reads),
      applyId,
      plans,
    );
    assert.equal(out.has('b.example.com'), false);
    const a = out.get(A)!;
    assert.equal(a.error, undefined);
    const content = a.steps[0]!.params['content'];
    assert.ok(content instanceof SecretText);
    assert.equal(
      JSON.stringify(a.steps[0]!.params),
      JSON.stringify(step('pw=«secret:secret/keeper/services/web/db#password»\n').params),
    );
    assert.equal(JSON.parse(revealJson(a.steps[0]!.params)).content, 'pw=canary-dispatch-1\n');
    assert.deepEqual(reads, [db.path]);
  });

  it('fails only the hosts whose secret cannot be read, with the reason', async function () {
    const plans = new Map([
      [A, { steps: [signed('«secret:0»')] }],
      ['b.example.com', { steps: [step('plain')] }],
    ]);
    const out = await resolvePlanSecrets(store({}), applyId, plans);
    assert.match(
      out.get(A)!.error!,
      /^cannot read secretstore:secret\/keeper\/services\/web\/db#password: the secrets store .* unreachable; nothing was sent to this host$/,
    );
    assert.equal(out.has('b.example.com'), false);
    const missing = await resolvePlanSecrets(store({ [db.path]: { other: 'x' } }), applyId, plans);
    assert.match(missing.get(A)!.error!, /has no field "password"/);
  });

  it('refuses a tampered handle: signed for another host, step or run, with another key, edited, or absent; nothing read, nothing sent', async function () {
    const reads: string[] = [];
    const keeperOwn = { path: 'secret/keeper', field: 'signing_key' };
    const cases: Array<[string, PlanStep]> = [
      ['another host', signed('«secret:0»', db, { sid: 'b.example.com' })],
      ['another step', signed('«secret:0»', db, { index: 1 })],
      ['another run', signed('«secret:0»', db, { binding: 'web.create.other' })],
      ['another key', signed('«secret:0»', db, { signKey: new Uint8Array(32).fill(8) })],
      [
        'an edited path',
        (() => {
          const st = signed('«secret:0»');
          return { ...st, secrets: [{ ...st.secrets![0]!, path: keeperOwn.path, field: keeperOwn.field }] };
        })(),
      ],
      ['a handle without an entry', signed('«secret:1»')],
      ['no entries at all', step('«secret:0»')],
      [
        'a path in the text (the old marker form)',
        signed('«secret:secret/keeper#signing_key@0123456789abcdef01234567»'),
      ],
    ];
    for (const [what, st] of cases) {
      const out = await resolvePlanSecrets(
        store({ [db.path]: { password: 'x' }, 'secret/keeper': { signing_key: 'x' } }, reads),
        applyId,
        new Map([[A, { steps: [st] }]]),
      );
      assert.equal(
        out.get(A)!.error,
        'a step holds a secret placeholder that this keeper did not issue for this run, host and step; nothing was sent to this host (render the run again)',
        what,
      );
    }
    assert.deepEqual(reads, []);
    // A handle the keeper signed for a path outside its prefix, or not canonical, is still not read.
    const outside = await resolvePlanSecrets(
      store({ 'secret/keeper': { signing_key: 'x' } }, reads),
      applyId,
      new Map([[A, { steps: [signed('«secret:0»', keeperOwn)] }]]),
    );
    assert.match(outside.get(A)!.error!, /outside secretstore.scenario_prefix/);
    const dotted = await resolvePlanSecrets(
      store({}, reads),
      applyId,
      new Map([
        [A, { steps: [signed('«secret:0»', { path: 'secret/keeper/services/web/../../keeper', field: 'x' })] }],
      ]),
    );
    assert.match(
      dotted.get(A)!.error!,
      /not a canonical secrets-store path: it holds a "\." or "\.\." segment; nothing was sent/,
    );
    assert.deepEqual(reads, []);
  });

  it("a plan applied under another apply_id resolves with the plan's binding, never the applying run's", async function () {
    const planId = 'web.plan.p-1';
    const plans = new Map([[A, { steps: [signed('«secret:0»', db, { binding: planId })] }]]);
    const ok = await resolvePlanSecrets(store({ [db.path]: { password: 'canary-dispatch-3' } }), planId, plans);
    assert.equal(ok.get(A)!.error, undefined);
    assert.equal(JSON.parse(revealJson(ok.get(A)!.steps[0]!.params)).content, 'canary-dispatch-3');
    const wrong = await resolvePlanSecrets(store({ [db.path]: { password: 'x' } }), 'web.update.applying-run', plans);
    assert.match(wrong.get(A)!.error!, /did not issue for this run, host and step/);
  });
});
