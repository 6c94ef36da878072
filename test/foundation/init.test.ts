// `keeper init` as an operator runs it: the real CLI against the real stack.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import knexFactory from 'knex';
import { decodeJwt } from 'jose';
import { cleanupKeeperFiles, prepareKeeperConfig, type TestKeeperFiles } from '../support/keeper';
import { repoRoot } from '../support/repo';

const run = promisify(execFile);
const KEEPER = path.join(repoRoot(), 'bin', 'keeper');

async function keeper(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(KEEPER, args, { timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err: any) {
    return { code: err.code ?? 1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}

async function operators(files: TestKeeperFiles): Promise<Array<{ aid: string; role: string }>> {
  const db = knexFactory({ client: 'pg', connection: files.db.dsn, pool: { min: 0, max: 1 } });
  try {
    // A refused init may stop before the schema exists: no table means no operator.
    if (!(await db.schema.hasTable('archons'))) return [];
    return await db('archons').select('aid', 'role');
  } finally {
    await db.destroy();
  }
}

describe('keeper init (real CLI, real stack)', function () {
  this.timeout(120_000);
  let files: TestKeeperFiles;
  beforeEach(async () => {
    files = await prepareKeeperConfig();
  });
  afterEach(async () => {
    await cleanupKeeperFiles(files);
  });

  it('creates the first cluster-admin and writes a 0400 credential with the bootstrap TTL', async () => {
    const out = path.join(files.dir, 'cred.jwt');
    const r = await keeper([
      'init',
      '--archon=alice@example.org',
      `--config=${files.configFile}`,
      `--credential-out=${out}`,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /created operator alice@example\.org \(role cluster-admin\)/);
    assert.equal(fs.statSync(out).mode & 0o777, 0o400);
    const claims = decodeJwt(fs.readFileSync(out, 'utf8').trim());
    assert.equal(claims.sub, 'alice@example.org');
    assert.equal(claims.iss, 'keeper-test');
    assert.equal((claims.exp as number) - (claims.iat as number), 720 * 3600);
    assert.deepEqual(await operators(files), [{ aid: 'alice@example.org', role: 'cluster-admin' }]);
  });

  it('refuses a second run with a clear message and leaves no new file', async () => {
    const first = await keeper([
      'init',
      '--archon=alice',
      `--config=${files.configFile}`,
      `--credential-out=${path.join(files.dir, 'a.jwt')}`,
    ]);
    assert.equal(first.code, 0, first.stderr);
    const second = await keeper([
      'init',
      '--archon=bob',
      `--config=${files.configFile}`,
      `--credential-out=${path.join(files.dir, 'b.jwt')}`,
    ]);
    assert.equal(second.code, 1);
    assert.match(second.stderr, /the operator registry is not empty \(1 operator\); keeper init runs once per cluster/);
    assert.equal(fs.existsSync(path.join(files.dir, 'b.jwt')), false);
    assert.deepEqual(
      (await operators(files)).map((o) => o.aid),
      ['alice'],
    );
  });

  it('run twice at the same moment: exactly one operator, the loser told why', async () => {
    const runs = await Promise.all(
      ['one', 'two', 'three'].map((aid) =>
        keeper([
          'init',
          `--archon=${aid}`,
          `--config=${files.configFile}`,
          `--credential-out=${path.join(files.dir, `${aid}.jwt`)}`,
        ]),
      ),
    );
    assert.equal(runs.filter((r) => r.code === 0).length, 1, runs.map((r) => r.stderr).join('\n'));
    for (const r of runs.filter((x) => x.code !== 0)) assert.match(r.stderr, /operator registry is not empty/);
    const ops = await operators(files);
    assert.equal(ops.length, 1);
    const files_ = fs.readdirSync(files.dir).filter((f) => f.endsWith('.jwt'));
    assert.deepEqual(files_, [`${ops[0]!.aid}.jwt`], 'only the winner wrote a credential, and no temp file is left');
  });

  it('checks the AID before touching anything', async () => {
    const out = path.join(files.dir, 'x.jwt');
    const r = await keeper(['init', '--archon=-Bad', `--config=${files.configFile}`, `--credential-out=${out}`]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /--archon "-Bad" is not a valid operator id: it must match/);
    assert.equal(fs.existsSync(out), false);
    assert.deepEqual(await operators(files), []);
  });

  it('never overwrites an existing credential file, and then creates no operator', async () => {
    const out = path.join(files.dir, 'exists.jwt');
    fs.writeFileSync(out, 'keep me');
    const r = await keeper(['init', '--archon=alice', `--config=${files.configFile}`, `--credential-out=${out}`]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /already exists; keeper init never overwrites a credential/);
    assert.equal(fs.readFileSync(out, 'utf8'), 'keep me');
    assert.deepEqual(await operators(files), []);
  });

  it('fails fast with the spec error when the DSN cannot be read', async () => {
    const yaml = fs
      .readFileSync(files.configFile, 'utf8')
      .replace(/dsn_ref: .*/, 'dsn_ref: secretstore:secret/keeper/missing-path');
    fs.writeFileSync(files.configFile, yaml);
    const r = await keeper([
      'init',
      '--archon=alice',
      `--config=${files.configFile}`,
      `--credential-out=${path.join(files.dir, 'c.jwt')}`,
    ]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /cannot read the database DSN from secretstore:secret\/keeper\/missing-path \(field dsn\)/);
  });

  it('names the key, the rule and the file for an invalid config', async () => {
    fs.writeFileSync(
      files.configFile,
      fs.readFileSync(files.configFile, 'utf8').replace(/ttl_default: .*/, 'ttl_default: one day'),
    );
    const r = await keeper([
      'init',
      '--archon=alice',
      `--config=${files.configFile}`,
      `--credential-out=${path.join(files.dir, 'c.jwt')}`,
    ]);
    assert.equal(r.code, 1);
    assert.ok(r.stderr.includes(files.configFile), r.stderr);
    assert.match(r.stderr, /auth\.jwt\.ttl_default: must be duration such as 30s, 15m, 24h/);
  });
});
