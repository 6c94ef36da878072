import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { SecretValue } from '../../common/secret';
import type { StepSender } from './deps';
import { contentDigestKey, diffGuard, keeperDiff, keyedDigest, secretSteps, stepPath } from './step-diff';

const key = contentDigestKey(new Uint8Array(32).fill(9));
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const soulDiff = (before: string, after: string) => ({
  content: {
    before: { sha256: sha(before), size: before.length },
    after: { sha256: sha(after), size: after.length },
    unified: `-${before}+${after}`,
  },
  mode: { from: '0644', to: '0600' },
});
const secret = new SecretValue({ path: 'secret/keeper/services/x/db', field: 'password' }, 'canary-step-diff');

describe('step diffs as the keeper keeps them', function () {
  it("replaces every plain hash by the keeper's keyed digest and keeps the rest of a file without a secret", function () {
    const d = keeperDiff(soulDiff('a\n', 'b\n'), key, false);
    assert.deepEqual(d, {
      content: {
        before: { digest: keyedDigest(key, sha('a\n')), size: 2 },
        after: { digest: keyedDigest(key, sha('b\n')), size: 2 },
        unified: '-a\n+b\n',
      },
      mode: { from: '0644', to: '0600' },
    });
    assert.ok(!JSON.stringify(d).includes(sha('a\n')) && !JSON.stringify(d).includes(sha('b\n')));
    // The same key gives the same digest (a plan and its check compare like with like); another key not.
    assert.equal(keyedDigest(contentDigestKey(new Uint8Array(32).fill(9)), sha('a\n')), keyedDigest(key, sha('a\n')));
    assert.notEqual(
      keyedDigest(contentDigestKey(new Uint8Array(32).fill(8)), sha('a\n')),
      keyedDigest(key, sha('a\n')),
    );
  });

  it('shows a secret step as "secret content changed": no content, no size, keyed digests only', function () {
    const d = keeperDiff(soulDiff('password = hunter2\n', 'plain\n'), key, true);
    assert.deepEqual(d, {
      content: {
        secret: true,
        note: 'secret content changed',
        before: { digest: keyedDigest(key, sha('password = hunter2\n')) },
        after: { digest: keyedDigest(key, sha('plain\n')) },
      },
      mode: { from: '0644', to: '0600' },
    });
  });

  it('counts a step as secret when it carries one, when its path is tainted, or after a step of this plan put one there', function () {
    const steps = [
      { index: 0, name: 'a', module: 'core.file.present', params: { path: '/etc/a', content: secret } },
      { index: 1, name: 'b', module: 'core.file.present', params: { path: '/etc//a', content: 'plain' } },
      { index: 2, name: 'c', module: 'core.file.present', params: { path: '/etc/c', content: 'plain' } },
      { index: 3, name: 'd', module: 'core.file.present', params: { path: '/etc/d/', content: 'plain' } },
      { index: 4, name: 'e', module: 'core.pkg.installed', params: { name: 'hello' } },
    ];
    assert.equal(stepPath(steps[1]!.params), '/etc/a');
    assert.deepEqual([...secretSteps(steps, new Set(['/etc/d']))].sort(), [0, 1, 3]);
  });

  it('never asks the soul for the content of a secret step, and keys what comes back', async function () {
    const asked: (boolean | undefined)[] = [];
    const inner: StepSender = {
      isConnected: () => true,
      async sendStep(_sid, step) {
        asked.push(step.showContent);
        const now = new Date();
        return {
          changed: true,
          ok: true,
          output: '',
          startedAt: now,
          finishedAt: now,
          replayed: false,
          diff: soulDiff('old\n', 'new\n'),
        };
      },
    };
    const guarded = diffGuard(inner, key, new Set([1]));
    const send = (stepIndex: number, params: Record<string, unknown>) =>
      guarded.sendStep(
        'h1',
        { applyId: 'x', stepIndex, module: 'core.file.present', params, dryRun: true, showContent: true },
        { timeoutMs: 1000 },
      );
    const plain = await send(0, { path: '/etc/a', content: 'new\n' });
    const tainted = await send(1, { path: '/etc/b', content: 'new\n' });
    const carries = await send(2, { path: '/etc/c', content: secret });
    assert.deepEqual(asked, [true, false, false]);
    assert.equal((plain.diff!.content as { unified?: string }).unified, '-old\n+new\n');
    for (const a of [tainted, carries])
      assert.deepEqual(Object.keys(a.diff!.content as object), ['secret', 'note', 'before', 'after']);
    assert.ok(![plain, tainted, carries].some((a) => JSON.stringify(a.diff).includes(sha('old\n'))));
  });
});
