import assert from 'node:assert/strict';
import { SecretValue } from '../../common/secret';
import { boundarySender, readsTainted, sameAsSecretFile, type HostBoundary } from './host-boundary';
import type { StepSender } from './deps';
import { contentDigestKey } from './step-diff';

const ref = { path: 'secret/keeper/services/web/db', field: 'password' };
const CANARY = 'canary-boundary-7f3a';
const PLACE = '«secret:secret/keeper/services/web/db#password»';

/** A soul that prints `out` and says what it was asked. */
function soul(out: string, asked: Array<Record<string, unknown>>): StepSender {
  return {
    isConnected: () => true,
    async sendStep(_sid, step, opts) {
      asked.push({ ...step });
      opts.onProgress?.(`progress ${out}`);
      const now = new Date();
      return { changed: false, ok: true, output: out, startedAt: now, finishedAt: now, replayed: false };
    },
  };
}

describe('the secret boundary of a host', function () {
  const key = contentDigestKey(new Uint8Array(32));
  const boundary = (b: Partial<HostBoundary> = {}): HostBoundary => ({
    tainted: new Set(['/etc/app/app.conf']),
    values: [new SecretValue(ref, CANARY)],
    ...b,
  });

  it('scrubs every value the host holds from a step that carries no secret, and tells the soul to do the same', async function () {
    const asked: Array<Record<string, unknown>> = [];
    const progress: string[] = [];
    const s = boundarySender(soul(`[db]\npassword = ${CANARY}\n`, asked), key, boundary(), [
      { index: 0, params: { argv: ['nginx', '-T'] } },
    ]);
    const a = await s.sendStep(
      'h1',
      { applyId: 'x', stepIndex: 0, module: 'core.cmd.run', params: { argv: ['nginx', '-T'] } },
      { timeoutMs: 1000, onProgress: (m) => progress.push(m) },
    );
    assert.equal(a.output, `[db]\npassword = ${PLACE}\n`);
    assert.deepEqual(progress, [`progress [db]\npassword = ${PLACE}\n`]);
    assert.equal((asked[0]!.redact as SecretValue[]).length, 1);
    assert.equal(asked[0]!.withhold, undefined);
  });

  it('withholds the output of a step naming a tainted path unless it is marked `output: safe`', async function () {
    const asked: Array<Record<string, unknown>> = [];
    const steps = [
      { index: 0, params: { argv: ['base64', '/etc/app/app.conf'] } },
      { index: 1, params: { argv: ['base64', '/etc/app/app.conf'] }, output_safe: true },
      { index: 2, params: { path: '/etc/app/app.conf', content: 'plain\n' } },
    ];
    const s = boundarySender(soul(`W2RiXQ== ${CANARY}`, asked), key, boundary(), steps);
    const send = (i: number) =>
      s.sendStep('h1', { applyId: 'x', stepIndex: i, module: 'm', params: steps[i]!.params }, { timeoutMs: 1000 });
    const withheld =
      'output withheld: this step may read /etc/app/app.conf, which holds a secret; mark the step `output: safe` to show it';
    assert.equal((await send(0)).output, withheld);
    assert.equal(asked[0]!.withhold, withheld, 'the soul keeps the same in its ledger');
    assert.equal((await send(1)).output, `W2RiXQ== ${PLACE}`);
    // The file step over the tainted path is the diff guard's: its own output is scrubbed, not withheld.
    assert.equal((await send(2)).output, `W2RiXQ== ${PLACE}`);
  });

  it('a path a secret is written to earlier in the same plan is tainted for the steps after it', function () {
    assert.equal(readsTainted({ argv: ['cat', '/etc/x/y.conf.bak'] }, new Set(['/etc/x/y.conf'])), '/etc/x/y.conf');
    assert.equal(readsTainted({ path: '/etc/x/y.conf', content: 'a' }, new Set(['/etc/x/y.conf'])), null);
    assert.equal(readsTainted({ argv: ['cat', '/etc/other'] }, new Set(['/etc/x/y.conf'])), null);
  });

  it('scrubs a value holding `"` and `\\` from every string of a diff, which its JSON text would escape', async function () {
    const quoted = 'pa"ss\\word-9c1e';
    const diffOf = (v: string) => ({ content: { unified: `-password = ${v}\n+password = x\n`, note: [v] } });
    const s = boundarySender(
      {
        isConnected: () => true,
        async sendStep() {
          const now = new Date();
          return {
            changed: true,
            ok: true,
            output: '',
            startedAt: now,
            finishedAt: now,
            replayed: false,
            diff: diffOf(quoted),
          };
        },
      },
      key,
      boundary({ tainted: new Set(), values: [new SecretValue(ref, quoted)] }),
      [{ index: 0, params: { path: '/etc/other.conf', content: 'x' } }],
    );
    const a = await s.sendStep(
      'h1',
      { applyId: 'x', stepIndex: 0, module: 'core.file.present', params: { path: '/etc/other.conf', content: 'x' } },
      { timeoutMs: 1000 },
    );
    assert.deepEqual(a.diff, diffOf(PLACE));
    assert.ok(!JSON.stringify(a.diff).includes('pa\\"ss'), 'no escaped form of the value either');
  });

  it('a file a step reads with the digest or inode of a secret file shows no content and no output', async function () {
    const files = [{ digest: 'a'.repeat(64), file_id: '1:2:3', path: '/etc/app/app.conf' }];
    const read = (digest: string, file_id: string) => [
      { path: '/etc/app/app.conf.bak', role: 'read' as const, digest, file_id },
    ];
    assert.deepEqual(sameAsSecretFile(read('a'.repeat(64), '1:9:9'), files), {
      path: '/etc/app/app.conf.bak',
      why: 'content identical to a secret file (/etc/app/app.conf)',
    });
    assert.deepEqual(
      sameAsSecretFile(read('b'.repeat(64), '1:2:3'), files)?.why,
      'the same file as a secret file (/etc/app/app.conf), by a hard link',
    );
    assert.equal(sameAsSecretFile(read('b'.repeat(64), '1:2:4'), files), null);
    const params = { path: '/etc/app/app.conf.bak', content: 'plain\n' };
    const steps = [
      { index: 0, params },
      { index: 1, params, output_safe: true },
    ];
    const asked: Array<Record<string, unknown>> = [];
    const s = boundarySender(
      {
        isConnected: () => true,
        async sendStep(_sid, step) {
          asked.push({ ...step });
          const now = new Date();
          const content = {
            before: { sha256: 'c'.repeat(64), size: 30 },
            after: { sha256: 'd'.repeat(64), size: 6 },
            unified: '-[db]\n+plain\n',
          };
          return {
            changed: true,
            ok: true,
            output: 'would update',
            startedAt: now,
            finishedAt: now,
            replayed: false,
            diff: { content },
            files: read('a'.repeat(64), '7:7:7'),
          };
        },
      },
      key,
      boundary({ tainted: new Set(), values: [], files }),
      steps,
    );
    const send = (i: number) =>
      s.sendStep(
        'h1',
        { applyId: 'x', stepIndex: i, module: 'core.file.present', params, dryRun: true, showContent: true },
        { timeoutMs: 1000 },
      );
    const a = await send(0);
    const c = a.diff!.content as Record<string, any>;
    assert.deepEqual(
      [c.secret, c.note, c.withheld, c.unified, c.before.size, c.after.size],
      [
        true,
        'secret content changed',
        'content identical to a secret file (/etc/app/app.conf)',
        undefined,
        undefined,
        undefined,
      ],
    );
    assert.match(c.before.digest, /^[0-9a-f]{64}$/);
    assert.equal(
      a.output,
      'output withheld: this step may read /etc/app/app.conf.bak, which holds a secret; mark the step `output: safe` to show it',
    );
    assert.equal('files' in a, false, 'the identities stay inside the boundary');
    assert.equal((await send(1)).output, 'would update', '`output: safe` shows it');
  });

  it('withholds every output of a host whose values cannot be read to scrub them', async function () {
    const s = boundarySender(
      soul(CANARY, []),
      key,
      boundary({ values: [], unreadable: 'the secrets store could not be read (down)' }),
      [{ index: 0, params: { argv: ['env'] } }],
    );
    const a = await s.sendStep(
      'h1',
      { applyId: 'x', stepIndex: 0, module: 'm', params: { argv: ['env'] } },
      { timeoutMs: 1000 },
    );
    assert.equal(a.output, 'output withheld: the secrets store could not be read (down)');
  });
});
