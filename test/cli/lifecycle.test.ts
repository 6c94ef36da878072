// keeperctl taking back what was added and issued (issue 31, "Remove and revoke"): the real program
// (bin/keeperctl) in its own process against a test keeper on the real stack.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '../support/repo';
import { startTestKeeper, type TestKeeper } from '../support/keeper';

interface Result { code: number; stdout: string; stderr: string }

const BIN = path.join(repoRoot(), 'bin', 'keeperctl');

describe('keeperctl: remove and revoke', function () {
  this.timeout(120_000);
  let k: TestKeeper;

  function ctl(args: string[], token = k.adminToken): Promise<Result> {
    return new Promise((resolve) => {
      const env = { PATH: process.env['PATH'], HOME: k.dir, KEEPER_URL: k.baseUrl, KEEPER_TOKEN: token };
      const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
      child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
      child.stdin.end('');
      child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    });
  }
  const ok = (r: Result) => assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);

  before(async () => { k = await startTestKeeper(); });
  after(async () => { await k?.stop(); });

  it('archons revoke-tokens: the old token is refused (exit 3, naming the fix), a new one works', async () => {
    ok(await ctl(['archons', 'create', 'rosa', '--role', 'operator']));
    const old = JSON.parse((await ctl(['archons', 'token', 'rosa', '-o', 'json'])).stdout).token as string;
    ok(await ctl(['souls', 'list'], old));
    const r = await ctl(['archons', 'revoke-tokens', 'rosa']);
    ok(r);
    assert.match(r.stdout, /^revoked the tokens of rosa issued before \S+; issue a new one with: keeperctl archons token rosa$/m);
    const refused = await ctl(['souls', 'list'], old);
    assert.equal(refused.code, 3, refused.stderr);
    assert.match(refused.stderr, /tokens of operator rosa issued before .* were revoked/);
    const fresh = JSON.parse((await ctl(['archons', 'token', 'rosa', '-o', 'json'])).stdout).token as string;
    ok(await ctl(['souls', 'list'], fresh));
    const unknown = await ctl(['archons', 'revoke-tokens', 'nobody']);
    assert.equal(unknown.code, 4, unknown.stderr);
    const help = await ctl(['archons', 'revoke-tokens', '--help']);
    ok(help);
    assert.match(help.stdout, /Examples:\n\s+keeperctl archons revoke-tokens alice/);
  });
});
