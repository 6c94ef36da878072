// `keeper check-config` without --offline checks what a start reaches (issue 37 row 10's network
// half): the real program against the stack. A config that works is valid; then one fault at a
// time, each named by its key with the fix: a secret_id the store refuses, Redis and Temporal where
// nothing listens, and a kid a live keeper holds. Nothing is changed: the live keeper keeps its kid.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { repoRoot } from '../support/repo';
import { freePort } from '../support/ports';
import { cleanupKeeperFiles, prepareKeeperConfig, startTestKeeper, type TestKeeperFiles } from '../support/keeper';

const KEEPER = path.join(repoRoot(), 'bin', 'keeper');

async function checkConfig(file: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await promisify(execFile)(KEEPER, ['check-config', `--config=${file}`], { timeout: 90_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('keeper check-config: the network a start reaches (real stack)', function () {
  this.timeout(240_000);
  let files: TestKeeperFiles;
  const variant = (name: string, mutate: (doc: Record<string, any>) => void) => {
    const doc = structuredClone(files.doc);
    mutate(doc);
    const file = path.join(files.dir, name);
    fs.writeFileSync(file, yaml.dump(doc));
    return file;
  };
  before(async () => {
    files = await prepareKeeperConfig();
  });
  after(async () => {
    if (files) await cleanupKeeperFiles(files);
  });

  it('a config whose store, database, cache and Temporal all answer: valid', async () => {
    const r = await checkConfig(files.configFile);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `${files.configFile}: valid\n`);
  });

  it('a secret_id the store refuses: secretstore.auth named with the fix, no secret printed', async () => {
    const wrong = path.join(files.dir, 'wrong-secret-id');
    fs.writeFileSync(wrong, '00000000-0000-0000-0000-000000000000\n', { mode: 0o400 });
    const r = await checkConfig(variant('bad-secret.yml', (d) => (d.secretstore.auth.secret_id_file = wrong)));
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /  - secretstore\.auth: cannot log in to the secrets store: .*; fix: check secretstore\.addr/,
    );
    assert.ok(!r.stderr.includes('00000000-0000'), 'the secret_id is never printed');
  });

  it('Redis and Temporal where nothing listens: cache.addr and temporal.address, each with its fix', async () => {
    const [redis, temporal] = [await freePort(), await freePort()];
    const r = await checkConfig(
      variant('bad-net.yml', (d) => {
        d.cache.addr = `127.0.0.1:${redis}`;
        d.temporal.address = `127.0.0.1:${temporal}`;
      }),
    );
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      new RegExp(`  - cache\\.addr: Redis at 127\\.0\\.0\\.1:${redis} does not answer .*; fix: start it`),
    );
    assert.match(
      r.stderr,
      new RegExp(
        `  - temporal\\.address: Temporal at 127\\.0\\.0\\.1:${temporal} does not answer .*; fix: start its frontend`,
      ),
    );
    assert.equal(r.stderr.match(/^ {2}- /gm)?.length, 2, r.stderr);
  });

  it('the kid of a live keeper: refused with the holder and the fix; the live keeper keeps it', async () => {
    const k = await startTestKeeper();
    try {
      const r = await checkConfig(variant('same-kid.yml', (d) => (d.kid = k.config.kid)));
      assert.equal(r.code, 1);
      assert.match(
        r.stderr,
        new RegExp(
          `  - kid: a live keeper already holds kid ${k.config.kid} \\(host .*, pid ${process.pid}, since .*\\); fix: give this keeper a kid of its own`,
        ),
      );
      assert.equal((await fetch(`${k.baseUrl}/readyz`)).status, 200, 'the live keeper is undisturbed');
    } finally {
      await k.stop();
    }
  });
});
