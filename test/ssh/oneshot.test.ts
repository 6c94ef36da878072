// `soul apply`, the soul's one-shot mode that push mode runs over SSH, as its own process in a UTS
// namespace named after its SID: the facts first, then steps applied with the soul's state modules,
// and the ledger on the host answering a redelivered step (a dispatch retried after a keeper crash)
// with its recorded result instead of applying it again.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { finished, spawnSoul, uniqueSid } from '../agents/harness';
import { tempDir } from '../runs/keeper';
import { repoRoot } from '../support/repo';

async function session(sid: string, stateDir: string, requests: unknown[]): Promise<any[]> {
  const child = spawnSoul(sid, ['apply', `--state-dir=${stateDir}`], {
    stdin: requests.map((r) => JSON.stringify(r)).join('\n') + '\n',
  });
  const r = await finished(child);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

describe('soul apply: the one-shot soul of push mode', function () {
  this.timeout(60_000);
  const root = tempDir('soul-apply-');
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  it('says who it is, applies steps in order, and replays a redelivered step from the ledger instead of applying it twice', async () => {
    const sid = uniqueSid('oneshot');
    const file = path.join(root, 'out', 'f.conf');
    const step = {
      id: 1,
      applyId: 'run-1',
      stepIndex: 0,
      module: 'core.file.present',
      params: { path: file, content: 'one\n', mode: '0600' },
    };
    const first = await session(sid, path.join(root, 'state'), [
      step,
      { ...step, id: 2, stepIndex: 1, params: { path: `${file}.2`, content: 'two\n' } },
    ]);
    assert.equal(first[0].hello.sid, sid);
    assert.equal(first[0].hello.soulprint.fqdn, sid);
    assert.deepEqual(
      first.slice(1).map((a) => [a.id, a.ok, a.changed, a.replayed]),
      [
        [1, true, true, false],
        [2, true, true, false],
      ],
    );
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.ok(fs.existsSync(path.join(root, 'state', sid, 'ledger')), 'the ledger is <state-dir>/<sid>/ledger');

    // Someone changes the file; the same (apply_id, step) delivered again is answered from the
    // ledger: replayed, the recorded outcome, and the file is not touched.
    fs.writeFileSync(file, 'edited\n');
    const again = await session(sid, path.join(root, 'state'), [step]);
    assert.deepEqual([again[1].ok, again[1].changed, again[1].replayed], [true, true, true]);
    assert.equal(fs.readFileSync(file, 'utf8'), 'edited\n');
    // A new run applies it.
    const next = await session(sid, path.join(root, 'state'), [{ ...step, applyId: 'run-2' }]);
    assert.deepEqual([next[1].changed, next[1].replayed], [true, false]);
    assert.equal(fs.readFileSync(file, 'utf8'), 'one\n');
  });

  it('answers a step it cannot take as failed, naming why, and goes on with the next', async () => {
    const sid = uniqueSid('oneshot');
    const out = await session(sid, path.join(root, 'state2'), [
      { id: 7, applyId: 'bad id with spaces', stepIndex: 0, module: 'core.file.present', params: {} },
      {
        id: 8,
        applyId: 'run-x',
        stepIndex: 0,
        module: 'core.file.present',
        params: { path: path.join(root, 'x'), content: 'x' },
      },
    ]);
    assert.deepEqual([out[1].id, out[1].ok, out[1].changed], [7, false, false]);
    assert.match(out[1].output, /apply_id "bad id with spaces" is not valid/);
    assert.equal(out[2].id, 8);
    assert.equal(out[2].ok, true);
  });

  it("applies a module shipped with a service from the step's program, cached by hash in <state-dir>/modules, and replays it from the ledger", async () => {
    const sid = uniqueSid('oneshot');
    const kv = fs.readFileSync(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'kvmod', 'modules', 'kv', 'kv.js'),
    );
    const program = {
      sha256: createHash('sha256').update(kv).digest('hex'),
      content: kv.toString('base64'),
      dry_run: true,
      timeout_ms: 10_000,
    };
    const env = path.join(root, 'svc', 'app.env');
    const step = {
      id: 1,
      applyId: 'run-m',
      stepIndex: 0,
      module: 'kvmod.kv.present',
      params: { path: env, key: 'port', value: '80' },
      program,
    };
    const out = await session(sid, path.join(root, 'state3'), [{ ...step, dryRun: true }, step, { ...step, id: 2 }]);
    assert.deepEqual(
      out.slice(1).map((a) => [a.ok, a.changed, a.replayed, a.output]),
      [
        [true, true, false, 'would set port to 80'],
        [true, true, false, 'set port to 80'],
        [true, true, true, 'set port to 80'],
      ],
    );
    assert.deepEqual(out[1].diff, { key: 'port', from: null, to: '80' });
    assert.equal(fs.readFileSync(env, 'utf8'), 'port=80\n');
    assert.deepEqual(fs.readdirSync(path.join(root, 'state3', 'modules')), [program.sha256]);
    // Without its program the step names a module this soul does not have.
    const bare = await session(sid, path.join(root, 'state3'), [{ ...step, applyId: 'run-n', program: undefined }]);
    assert.deepEqual([bare[1].ok, bare[1].output], [false, 'unknown state module "kvmod.kv.present" on this soul']);
  });
});
