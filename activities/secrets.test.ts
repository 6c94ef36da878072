import assert from 'node:assert/strict';
import { SecretText, SecretValue, revealJson } from '../common/secret';
import { makeMarker } from '../scenario/secrets/markers';
import { markerNonce, resolvePlanSecrets, secretSender, type DispatchSecrets } from './secrets';
import type { StepSender } from './deps';

const key = new Uint8Array(32).fill(7);
const applyId = 'web.create.abc-1234';
const nonce = markerNonce(key, applyId);
const db = { path: 'secret/keeper/services/web/db', field: 'password' };

function store(fields: Record<string, Record<string, unknown>>, reads: string[] = []): DispatchSecrets {
  return {
    nonceKey: key, scenarioPrefix: 'secret/keeper/services/',
    reader: { async readFields(p) { reads.push(p); if (!(p in fields)) throw new Error('the secrets store at http://127.0.0.1:1 is unreachable'); return fields[p]!; } },
  };
}
const step = (content: string) => ({ index: 0, name: 'conf', module: 'core.file.present', params: { path: '/etc/x', content } });

describe('secrets at dispatch', function () {
  it('replaces the run\'s markers by secret-typed values that only the wire encoding reveals', async function () {
    const reads: string[] = [];
    const plans = new Map([['a.example.com', { steps: [step(`pw=${makeMarker(db, nonce)}\n`)] }], ['b.example.com', { steps: [step('plain')] }]]);
    const out = await resolvePlanSecrets(store({ [db.path]: { password: 'canary-dispatch-1' } }, reads), applyId, plans);
    assert.equal(out.has('b.example.com'), false);
    const a = out.get('a.example.com')!;
    assert.equal(a.error, undefined);
    const content = a.steps[0]!.params['content'];
    assert.ok(content instanceof SecretText);
    assert.equal(JSON.stringify(a.steps), JSON.stringify([step('pw=«secret:secret/keeper/services/web/db#password»\n')]));
    assert.equal(JSON.parse(revealJson(a.steps[0]!.params)).content, 'pw=canary-dispatch-1\n');
    assert.deepEqual(reads, [db.path]);
  });

  it('fails only the hosts whose secret cannot be read, with the reason', async function () {
    const plans = new Map([['a.example.com', { steps: [step(makeMarker(db, nonce))] }], ['b.example.com', { steps: [step('plain')] }]]);
    const out = await resolvePlanSecrets(store({}), applyId, plans);
    assert.match(out.get('a.example.com')!.error!, /^cannot read secretstore:secret\/keeper\/services\/web\/db#password: the secrets store .* unreachable; nothing was sent to this host$/);
    assert.equal(out.has('b.example.com'), false);
    const missing = await resolvePlanSecrets(store({ [db.path]: { other: 'x' } }), applyId, plans);
    assert.match(missing.get('a.example.com')!.error!, /has no field "password"/);
  });

  it('never resolves a marker of another run, a forged one, or one outside the keeper\'s prefix', async function () {
    const forged = makeMarker(db, markerNonce(key, 'other-run'));
    const out = await resolvePlanSecrets(store({ [db.path]: { password: 'x' } }), applyId, new Map([['a.example.com', { steps: [step(forged)] }]]));
    assert.match(out.get('a.example.com')!.error!, /not this run's/);
    const outside = makeMarker({ path: 'secret/keeper', field: 'dsn' }, nonce);
    const o2 = await resolvePlanSecrets(store({ 'secret/keeper': { dsn: 'x' } }), applyId, new Map([['a.example.com', { steps: [step(outside)] }]]));
    assert.match(o2.get('a.example.com')!.error!, /outside secretstore.scenario_prefix/);
  });

  it('scrubs a value a soul echoes back in its output', async function () {
    const inner: StepSender = {
      isConnected: () => true,
      async sendStep() { return { changed: true, ok: false, output: 'E: unable to locate package canary-dispatch-2', startedAt: new Date(), finishedAt: new Date(), replayed: false }; },
    };
    const v = new SecretValue(db, 'canary-dispatch-2');
    const r = await secretSender(inner, [v]).sendStep('a', { applyId, stepIndex: 0, module: 'core.pkg.installed', params: { name: v } }, { timeoutMs: 1000 });
    assert.equal(r.output, 'E: unable to locate package «secret:secret/keeper/services/web/db#password»');
  });
});
