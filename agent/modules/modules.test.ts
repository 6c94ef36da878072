// Modules shipped with a service, on the soul: real programs (node scripts) run from a real cache
// directory through the module protocol; the cache's hash check, the timeout and the output cap.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serviceModule, withProgram, type StepProgram } from './module';
import { ensureProgram } from './cache';
import { MAX_OUTPUT_BYTES } from './runner';

// A key=value file module: {path, key, value}; a true dry run with a diff.
const KV = `#!/usr/bin/env node
const fs = require('node:fs');
let input = '';
process.stdin.on('data', (b) => { input += b; });
process.stdin.on('end', () => {
  const { state, params, dry_run } = JSON.parse(input);
  if (state !== 'present') { console.log(JSON.stringify({ changed: false, output: 'unknown state ' + state })); process.exit(2); }
  let text = '';
  try { text = fs.readFileSync(params.path, 'utf8'); } catch {}
  const lines = text.split('\\n').filter(Boolean);
  const was = lines.find((l) => l.startsWith(params.key + '='));
  const want = params.key + '=' + params.value;
  if (was === want) { console.log(JSON.stringify({ changed: false, output: params.key + ' is set' })); return; }
  if (!dry_run) fs.writeFileSync(params.path, [...lines.filter((l) => l !== was), want].join('\\n') + '\\n');
  console.log(JSON.stringify({ changed: true, output: (dry_run ? 'would set ' : 'set ') + params.key, diff: { key: params.key, from: was ? was.slice(params.key.length + 1) : null, to: params.value } }));
});
`;

const program = (source: string, extra: Partial<StepProgram> = {}): StepProgram => {
  const buf = Buffer.from(source);
  return {
    sha256: createHash('sha256').update(buf).digest('hex'),
    contentBase64: buf.toString('base64'),
    dryRun: true,
    timeoutMs: 10_000,
    ...extra,
  };
};

describe('modules shipped with a service, on the soul', function () {
  this.timeout(30_000);
  let dir: string;
  let cache: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'soul-modules-'));
    cache = path.join(dir, 'modules');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('speaks the protocol: a dry run answers its diff and changes nothing, apply changes, a second apply is a no-op', async () => {
    const kv = serviceModule('app.kv.present', program(KV), cache);
    const file = path.join(dir, 'app.env');
    fs.writeFileSync(file, 'a=1\n');
    const params = { path: file, key: 'port', value: '8080' };
    assert.deepEqual(await kv.run(params, { dryRun: true }), {
      changed: true,
      ok: true,
      output: 'would set port',
      diff: { key: 'port', from: null, to: '8080' },
    });
    assert.equal(fs.readFileSync(file, 'utf8'), 'a=1\n');
    assert.deepEqual(await kv.run(params, { dryRun: false }), {
      changed: true,
      ok: true,
      output: 'set port',
      diff: { key: 'port', from: null, to: '8080' },
    });
    assert.equal(fs.readFileSync(file, 'utf8'), 'a=1\nport=8080\n');
    assert.deepEqual(await kv.run(params, { dryRun: false }), { changed: false, ok: true, output: 'port is set' });
    // Cached by its hash, readable and runnable by the soul only.
    const sha = program(KV).sha256;
    assert.deepEqual(fs.readdirSync(cache), [sha]);
    assert.equal(fs.statSync(path.join(cache, sha)).mode & 0o777, 0o700);
  });

  it("a tampered cached program is not run: it is written again from the step's copy, and the output says so", async () => {
    const p = program(KV);
    const file = path.join(dir, 'app.env');
    const kv = serviceModule('app.kv.present', p, cache);
    await kv.run({ path: file, key: 'a', value: '1' }, { dryRun: false });
    const cached = path.join(cache, p.sha256);
    const marker = path.join(dir, 'tampered-ran');
    fs.writeFileSync(cached, `#!/bin/sh\ntouch ${marker}\necho '{"changed": false}'\n`);
    const r = await kv.run({ path: file, key: 'b', value: '2' }, { dryRun: false });
    assert.equal(fs.existsSync(marker), false, 'the tampered program never ran');
    assert.equal(r.ok, true);
    assert.match(
      r.output,
      /^the cached program .* failed its check \(its sha256 no longer matches\): it was not run, and was written again from the keeper's copy\nset b$/,
    );
    assert.equal(fs.readFileSync(cached, 'utf8'), KV);
    assert.equal(fs.readFileSync(file, 'utf8'), 'a=1\nb=2\n');
  });

  it("a program that does not match the step's hash is refused; nothing runs and nothing is cached", async () => {
    const p = { ...program(KV), sha256: program('#!/bin/sh\n').sha256 };
    const r = await serviceModule('app.kv.present', p, cache).run(
      { path: path.join(dir, 'x'), key: 'a', value: '1' },
      { dryRun: false },
    );
    assert.equal(r.ok, false);
    assert.match(
      r.output,
      /^app\.kv\.present: the program received does not match its sha256 [0-9a-f]{64} \(got [0-9a-f]{64}\); nothing was run$/,
    );
    assert.equal(fs.existsSync(path.join(dir, 'x')), false);
    assert.deepEqual(fs.existsSync(cache) ? fs.readdirSync(cache) : [], []);
    assert.throws(() => ensureProgram(cache, { sha256: '../../etc/passwd', contentBase64: '' }), /not a sha256/);
  });

  it('stops a program past its timeout (its children too) and one that writes past the output cap', async () => {
    // Its child holds stdout open for 120 s: the step ends (within the test's timeout) only if the
    // whole process group was stopped.
    const sleeper = `#!/bin/sh\nsleep 120 &\nwait\n`;
    const r = await serviceModule('app.slow.present', program(sleeper, { timeoutMs: 300 }), cache).run(
      {},
      { dryRun: false },
    );
    assert.deepEqual(r, {
      changed: false,
      ok: false,
      output: 'the module program ran past its timeout of 300 ms and was stopped',
    });
    const chatty = `#!/usr/bin/env node\nprocess.stdout.write('x'.repeat(${MAX_OUTPUT_BYTES + 1}));\nsetTimeout(() => {}, 20000);\n`;
    const c = await serviceModule('app.chatty.present', program(chatty), cache).run({}, { dryRun: false });
    assert.deepEqual(c, {
      changed: false,
      ok: false,
      output: `the module program wrote more than ${MAX_OUTPUT_BYTES} bytes to stdout and was stopped`,
    });
  });

  it('a failing program fails the step with its own words or its stderr; an answer out of protocol fails it too', async () => {
    const unknown = await serviceModule('app.kv.absent', program(KV), cache).run({}, { dryRun: false });
    assert.deepEqual(unknown, {
      changed: false,
      ok: false,
      output: 'the module program exited with status 2: unknown state absent',
    });
    const stderr = await serviceModule(
      'app.e.present',
      program('#!/bin/sh\necho "no such thing" >&2\nexit 3\n'),
      cache,
    ).run({}, { dryRun: false });
    assert.equal(stderr.output, 'the module program exited with status 3: no such thing');
    // Non-JSON on stdout and exit 1 (runuser's complaint, psql's FATAL): both streams are the output.
    const plain = await serviceModule(
      'app.p.present',
      program('echo "FATAL: role app does not exist"\necho "could not connect" >&2\nexit 1\n', { runtime: 'sh' }),
      cache,
    ).run({}, { dryRun: false });
    assert.equal(
      plain.output,
      'the module program exited with status 1: FATAL: role app does not exist\ncould not connect',
    );
    const long = await serviceModule(
      'app.l.present',
      program(`i=0; while [ $i -lt 3000 ]; do echo "line $i"; i=$((i+1)); done; exit 1\n`, { runtime: 'sh' }),
      cache,
    ).run({}, { dryRun: false });
    assert.ok(long.output.length < 4200, String(long.output.length));
    assert.match(long.output, /^the module program exited with status 1: ….*\nline 2999$/s);
    const junk = await serviceModule('app.j.present', program('#!/bin/sh\necho hello\n'), cache).run(
      {},
      { dryRun: false },
    );
    assert.equal(junk.ok, false);
    assert.match(junk.output, /answer is not \{"changed": bool, "output": "..."\}: "hello"/);
  });

  it('runtime sh and node: no #! line needed; params come on stdin, in a 0600 file (removed after) and as env for scalars', async () => {
    // A sh program that needs no JSON parser: its params in KEEPER_PARAM_*, the file's path and mode.
    const sh = [
      'f="$KEEPER_PARAMS_FILE"',
      'mode=$(stat -c %a "$f")',
      'printf \'{"changed": false, "output": "%s %s %s %s %s %s %s"}\' "$KEEPER_STATE" "$KEEPER_DRY_RUN" "$KEEPER_PARAM_NAME" "$KEEPER_PARAM_PORT" "$KEEPER_PARAM_ON" "$mode" "$(pwd)"',
      'echo "$f" > ' + path.join(dir, 'params-path'),
      '',
    ].join('\n');
    const r = await serviceModule('app.sh.present', program(sh, { runtime: 'sh' }), cache).run(
      { name: 'web', port: 8080, on: true, list: [1] },
      { dryRun: true },
    );
    assert.deepEqual(r, { changed: false, ok: true, output: 'present 1 web 8080 true 600 /' });
    const paramsFile = fs.readFileSync(path.join(dir, 'params-path'), 'utf8').trim();
    assert.equal(path.dirname(paramsFile), cache);
    assert.equal(fs.existsSync(paramsFile), false, 'the params file is removed once the program ended');
    assert.deepEqual(fs.readdirSync(cache), [program(sh).sha256]);

    // runtime node: the soul's own node runs it (no #! line); the file holds what stdin holds.
    const node = `const fs = require('node:fs');
const input = JSON.parse(fs.readFileSync(0, 'utf8'));
const file = JSON.parse(fs.readFileSync(process.env.KEEPER_PARAMS_FILE, 'utf8'));
console.log(JSON.stringify({ changed: true, output: [process.execPath, process.cwd(), JSON.stringify(file) === JSON.stringify(input), input.params.name].join(' ') }));
`;
    const n = await serviceModule('app.node.present', program(node, { runtime: 'node' }), cache).run(
      { name: 'db' },
      { dryRun: false },
    );
    assert.deepEqual(n, { changed: true, ok: true, output: `${process.execPath} / true db` });
  });

  it('a param holding a secret of the step is in stdin and the file, never in the environment', async () => {
    const sh = `printf '{"changed": false, "output": "[%s] [%s] [%s]"}' "$KEEPER_PARAM_USER" "\${KEEPER_PARAM_PASSWORD-unset}" "$(grep -c s3cret-pw "$KEEPER_PARAMS_FILE")"\n`;
    const r = await serviceModule('app.pw.present', program(sh, { runtime: 'sh' }), cache).run(
      { user: 'app', password: 's3cret-pw' },
      { dryRun: false, secrets: ['s3cret-pw'] },
    );
    assert.deepEqual(r, { changed: false, ok: true, output: '[app] [unset] [1]' });
  });
  it('a program without a dry run is not started in check mode; a shipped module never stands in for core.*', async () => {
    const marker = path.join(dir, 'ran');
    const p = program(`#!/bin/sh\ntouch ${marker}\necho '{"changed": true}'\n`, { dryRun: false });
    const r = await serviceModule('app.touch.present', p, cache).run({}, { dryRun: true });
    assert.deepEqual(r, {
      changed: true,
      ok: true,
      output: 'would run app.touch.present (its program has no dry run, so what it would change is not known)',
    });
    assert.equal(fs.existsSync(marker), false);
    const core = { name: 'core.file.present', run: async () => ({ changed: false, ok: true, output: 'core' }) };
    const reg = { get: (n: string) => (n === 'core.file.present' ? core : undefined) };
    assert.equal(withProgram(reg, 'core.file.present', p, cache).get('core.file.present'), core);
    assert.equal(withProgram(reg, 'app.touch.present', p, cache).get('app.touch.present')!.name, 'app.touch.present');
    assert.equal(withProgram(reg, 'app.touch.present', undefined, cache).get('app.touch.present'), undefined);
  });
});
