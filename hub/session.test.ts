import assert from 'node:assert/strict';
import type { KeeperMessage, Soulprint } from '../proto/types';
import { StepCancelled, StepInterrupted, StepTimeout } from './dispatch-errors';
import { MAX_DIFF_JSON, Session, parseDiff } from './session';

function fakeSession(sid = 'a.keeper.test') {
  const sent: KeeperMessage[] = [];
  let ended = false;
  const s = new Session('sess-1', sid, 7, {} as Soulprint, {
    write: (m) => sent.push(m),
    end: () => {
      ended = true;
    },
  });
  return { s, sent, ended: () => ended };
}

const step = { applyId: 'apply-1', stepIndex: 2, module: 'core.file.present', params: { path: '/tmp/x' } };

function requestId(sent: KeeperMessage[]): string {
  const m = sent.find((x) => 'step_request' in x) as { step_request: { request_id: string } };
  return m.step_request.request_id;
}

describe('hub/session', () => {
  it('sends a step request and resolves with the matching result, passing progress on', async () => {
    const { s, sent } = fakeSession();
    const progress: string[] = [];
    const p = s.sendStep(step, { timeoutMs: 5000, onProgress: (m) => progress.push(m) });
    const req = (sent[0] as any).step_request;
    assert.deepEqual(
      { ...req, request_id: undefined },
      {
        request_id: undefined,
        apply_id: 'apply-1',
        step_index: 2,
        module: 'core.file.present',
        params_json: '{"path":"/tmp/x"}',
        dry_run: false,
        show_content: false,
        program: null, // a core module: no program (null is not written on the wire)
        redact_json: '', // no secret on this host: nothing to scrub
        withhold: '',
      },
    );
    assert.ok(s.onProgress({ request_id: req.request_id, message: 'writing' }));
    assert.ok(
      s.onResult({
        request_id: req.request_id,
        apply_id: 'apply-1',
        step_index: 2,
        changed: true,
        ok: true,
        output: 'done',
        started_at_ms: 1,
        finished_at_ms: 2,
        replayed: false,
        diff_json: '',
        files: [],
      }),
    );
    const r = await p;
    assert.deepEqual(progress, ['writing']);
    assert.equal(r.ok, true);
    assert.equal(r.changed, true);
    assert.equal(s.inFlight, 0);
  });

  it('check mode: asks for content only in a dry run, and bounds the diff a soul sends back', async () => {
    const { s, sent } = fakeSession();
    const p = s.sendStep({ ...step, dryRun: true, showContent: true }, { timeoutMs: 5000 });
    const req = (sent[0] as any).step_request;
    assert.deepEqual([req.dry_run, req.show_content], [true, true]);
    s.onResult({
      request_id: req.request_id,
      apply_id: 'apply-1',
      step_index: 2,
      changed: true,
      ok: true,
      output: 'would update',
      started_at_ms: 1,
      finished_at_ms: 2,
      replayed: false,
      diff_json: '{"mode":{"from":"0644","to":"0600"}}',
      files: [],
    });
    assert.deepEqual((await p).diff, { mode: { from: '0644', to: '0600' } });
    // Content is never asked for outside a dry run.
    void s.sendStep({ ...step, showContent: true }, { timeoutMs: 5000 }).catch(() => undefined);
    assert.equal((sent[1] as any).step_request.show_content, false);
    assert.deepEqual(parseDiff('x'.repeat(MAX_DIFF_JSON + 1)), {
      truncated: `the soul's diff was ${MAX_DIFF_JSON + 1} bytes, more than ${MAX_DIFF_JSON}`,
    });
    assert.deepEqual(parseDiff('[1]'), { invalid: 'the soul sent a diff that is not a JSON object' });
    assert.equal(parseDiff(''), undefined);
  });

  it('ignores results for requests it never sent (another stream cannot answer them)', () => {
    const { s } = fakeSession();
    assert.equal(
      s.onResult({
        request_id: 'forged',
        apply_id: 'x',
        step_index: 0,
        changed: true,
        ok: true,
        output: '',
        started_at_ms: 0,
        finished_at_ms: 0,
        replayed: false,
        diff_json: '',
        files: [],
      }),
      false,
    );
  });

  it('rejects with StepTimeout and sends cancel when the soul is silent', async () => {
    const { s, sent } = fakeSession();
    await assert.rejects(
      s.sendStep(step, { timeoutMs: 20 }),
      (err: unknown) => err instanceof StepTimeout && err.delivered,
    );
    assert.deepEqual(sent[1], { cancel: { request_id: requestId(sent), reason: 'timeout' } });
  });

  it('rejects with StepCancelled and sends cancel on abort', async () => {
    const { s, sent } = fakeSession();
    const ac = new AbortController();
    const p = s.sendStep(step, { timeoutMs: 5000, signal: ac.signal });
    ac.abort();
    await assert.rejects(p, StepCancelled);
    assert.equal((sent[1] as any).cancel.reason, 'cancelled');
  });

  it('rejects in-flight steps with StepInterrupted when closed, after a goodbye', async () => {
    const { s, sent, ended } = fakeSession();
    const p = s.sendStep(step, { timeoutMs: 5000 });
    s.close('superseded by a newer stream', 'superseded');
    await assert.rejects(
      p,
      (err: unknown) => err instanceof StepInterrupted && /superseded/.test((err as Error).message),
    );
    assert.deepEqual(sent[1], { goodbye: { reason: 'superseded' } });
    assert.ok(ended());
    await assert.rejects(s.sendStep(step, { timeoutMs: 10 }), StepInterrupted);
  });
});
