// keeperctl as an operator uses it: the real program (bin/keeperctl) in its own process against a
// test keeper on the real stack, with a real soul applying a real service from git. Every command's
// happy path, each class of failure with its exit code, --output json/yaml parsed, and the live
// progress display in a real pseudo-terminal (tmux).
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import { repoRoot } from '../support/repo';
import type { TestKeeper } from '../support/keeper';
import { gitRepoFrom, startRunKeeper, startSouls, tempDir, type TestSoul } from '../runs/keeper';

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

const BIN = path.join(repoRoot(), 'bin', 'keeperctl');

describe('keeperctl, the operator CLI, against a real keeper', function () {
  this.timeout(300_000);
  let k: TestKeeper;
  let root: string;
  let home: string;
  let souls: TestSoul[];
  let out: string;
  const baseEnv = (): NodeJS.ProcessEnv => {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env['PATH'],
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, '.config'),
      TMPDIR: root,
    };
    return env;
  };

  function ctl(args: string[], opts: { env?: NodeJS.ProcessEnv; input?: string } = {}): Promise<Result> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [BIN, ...args], {
        env: { ...baseEnv(), ...opts.env },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
      });
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      child.stdin.end(opts.input ?? '');
      child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    });
  }
  const ok = (r: Result) => assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  const input = (extra: string[] = []) => [
    '--input',
    `root=${out}`,
    '--input',
    'message=from keeperctl',
    '--input',
    'package=git',
    ...extra,
  ];

  before(async () => {
    root = tempDir('keeperctl-');
    home = path.join(root, 'home');
    out = path.join(root, 'out');
    fs.mkdirSync(home);
    k = await startRunKeeper();
    fs.writeFileSync(path.join(root, 'admin.jwt'), k.adminToken, { mode: 0o600 });
    souls = await startSouls(k, path.join(root, 'souls'), [['edge']]);
  });
  after(async () => {
    // The drift check's Temporal Schedule outlives this keeper; left on, it would keep a check waiting
    // on this keeper's task queue for ever, and a later run of this file would find it skipping.
    if (k)
      await ctl(['incarnations', 'drift', 'motd-edge', '--off'], {
        env: { KEEPER_URL: k.baseUrl, KEEPER_TOKEN: k.adminToken },
      }).catch(() => undefined);
    try {
      execFileSync('tmux', ['kill-server'], { stdio: 'ignore', env: { ...process.env, TMUX_TMPDIR: root } });
    } catch {
      /* none running */
    }
    await Promise.all((souls ?? []).map((s) => s.run.kill()));
    await k?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('login saves the cluster and a 0600 token, refuses a bad token and saves nothing then', async () => {
    const bad = path.join(root, 'bad.jwt');
    fs.writeFileSync(bad, 'eyJhbGciOiJIUzI1NiJ9.e30.invalid');
    const refused = await ctl(['login', 'test', '--url', k.baseUrl, '--token-file', bad]);
    assert.equal(refused.code, 3, refused.stderr);
    assert.match(refused.stderr, /does not accept this token/);
    assert.equal(fs.existsSync(path.join(home, '.config', 'keeper', 'config.yml')), false);

    ok(await ctl(['login', 'test', '--url', k.baseUrl, '--token-file', path.join(root, 'admin.jwt')]));
    const tokenFile = path.join(home, '.config', 'keeper', 'tokens', 'test');
    assert.equal(fs.statSync(tokenFile).mode & 0o777, 0o600);
    assert.equal(fs.readFileSync(tokenFile, 'utf8').trim(), k.adminToken);
    const clusters = JSON.parse((await ctl(['clusters', '-o', 'json'])).stdout);
    assert.equal(clusters.current, 'test');
    assert.deepEqual(
      clusters.clusters.map((c: any) => [c.name, c.url]),
      [['test', k.baseUrl]],
    );
  });

  it('a second cluster by name; use switches; KEEPER_URL/KEEPER_TOKEN override the file', async () => {
    const viaStdin = await ctl(['login', 'other', '--url', k.baseUrl, '--token-stdin'], { input: `${k.adminToken}\n` });
    ok(viaStdin);
    assert.equal(JSON.parse((await ctl(['clusters', '-o', 'json'])).stdout).current, 'other');
    ok(await ctl(['use', 'test']));
    assert.equal(JSON.parse((await ctl(['clusters', '-o', 'json'])).stdout).current, 'test');
    ok(await ctl(['logout', 'other']));
    assert.equal(JSON.parse((await ctl(['clusters', '-o', 'json'])).stdout).clusters.length, 1);
    // The environment wins over the saved cluster: a wrong URL there is used, and fails as a network error.
    const env = await ctl(['souls', 'list'], { env: { KEEPER_URL: 'http://127.0.0.1:9', KEEPER_TOKEN: k.adminToken } });
    assert.equal(env.code, 6, env.stderr);
    assert.match(env.stderr, /cannot reach the keeper at http:\/\/127\.0\.0\.1:9/);
  });

  it('souls add, list, get and issue-token; 409 without --force, and --force', async () => {
    const sid = 'cli-new.keeper.test';
    const add = await ctl(['souls', 'add', sid, '--coven', 'web', '--coven', 'db']);
    ok(add);
    assert.match(add.stdout, /bootstrap token \(shown once/);
    assert.match(add.stdout, /kbt_/);

    const list = JSON.parse((await ctl(['souls', 'list', '-o', 'json'])).stdout);
    assert.ok(list.items.some((s: any) => s.sid === sid && s.status === 'pending'));
    const filtered = JSON.parse((await ctl(['souls', 'list', '--coven', 'edge', '-o', 'json', '--all'])).stdout);
    assert.deepEqual(
      filtered.items.map((s: any) => s.sid),
      [souls[0]!.sid],
    );
    const table = (await ctl(['souls', 'list'])).stdout;
    assert.match(table.split('\n')[0]!, /^SID\s+STATUS\s+TRANSPORT\s+COVENS/);
    assert.match(table, new RegExp(`${sid.replace(/\./g, '\\.')}\\s+pending\\s+agent\\s+web,db`));

    const got = yaml.load((await ctl(['souls', 'get', sid, '-o', 'yaml'])).stdout) as any;
    assert.deepEqual(got.covens, ['web', 'db']);

    const conflict = await ctl(['souls', 'issue-token', sid]);
    assert.equal(conflict.code, 5, conflict.stderr);
    assert.match(conflict.stderr, /Conflict: /);
    assert.match(conflict.stderr, new RegExp(`keeperctl souls issue-token ${sid.replace(/\./g, '\\.')} --force`));
    const forced = await ctl(['souls', 'issue-token', sid, '--force', '-o', 'json']);
    ok(forced);
    assert.match(JSON.parse(forced.stdout).bootstrap_token, /^kbt_/);

    const unasked = await ctl(['souls', 'revoke', sid]);
    assert.equal(unasked.code, 2, 'revoking asks first; without a terminal it needs --yes');
    const revoked = await ctl(['souls', 'revoke', sid, '--yes', '-o', 'json']);
    ok(revoked);
    assert.equal(JSON.parse(revoked.stdout).status, 'revoked');
    assert.match((await ctl(['souls', 'get', sid])).stdout, /status:\s+revoked/);
  });

  it('souls add --transport ssh registers without a token; a missing field is exit 2 naming it; souls check of a host it cannot reach is exit 1 with the reason', async () => {
    const sid = 'cli-ssh.keeper.test';
    const dir = tempDir('cli-ssh-');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'a comment', '-f', path.join(dir, 'host')]);
    const keyFile = path.join(dir, 'host.pub');
    const pinned = fs.readFileSync(keyFile, 'utf8').split(' ').slice(0, 2).join(' ');
    try {
      const missing = await ctl([
        'souls',
        'add',
        sid,
        '--coven',
        'build',
        '--transport',
        'ssh',
        '--address',
        '127.0.0.1',
        '--user',
        'root',
        '--host-key',
        `@${keyFile}`,
      ]);
      assert.equal(missing.code, 2, missing.stderr);
      assert.match(missing.stderr, /\/body\/ssh\/credential_ref/);
      const add = await ctl([
        'souls',
        'add',
        sid,
        '--coven',
        'build',
        '--transport',
        'ssh',
        '--address',
        '127.0.0.1',
        '--port',
        '9',
        '--user',
        'root',
        '--host-key',
        `@${keyFile}`,
        '--credential-ref',
        'secretstore:secret/keeper/services/nowhere#private_key',
      ]);
      ok(add);
      assert.match(add.stdout, /reached over SSH as root@127\.0\.0\.1:9; no token/);
      assert.doesNotMatch(add.stdout, /kbt_/);
      const got = JSON.parse((await ctl(['souls', 'get', sid, '-o', 'json'])).stdout);
      assert.equal(got.ssh.host_key, pinned, 'the key from the file, pinned without its comment');
      const check = await ctl(['souls', 'check', sid]);
      assert.equal(check.code, 1, check.stderr);
      assert.match(
        check.stderr,
        /cli-ssh\.keeper\.test is not reachable: cannot read the private key at secretstore:secret\/keeper\/services\/nowhere#private_key/,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('not found is exit 4; input the API refuses is exit 2 with the field; usage errors are exit 2', async () => {
    const missing = await ctl(['souls', 'get', 'nobody.keeper.test']);
    assert.equal(missing.code, 4);
    assert.match(missing.stderr, /Not Found: soul nobody\.keeper\.test is not registered/);

    const invalid = await ctl(['souls', 'add', 'short', '--coven', 'web']);
    assert.equal(invalid.code, 2, invalid.stderr);
    assert.match(invalid.stderr, /Bad Request: /);
    assert.match(invalid.stderr, /\/params\/sid|\/body\/sid/);

    const usage = await ctl(['souls', 'frobnicate']);
    assert.equal(usage.code, 2);
    const badInput = await ctl(['run', 'x', 'create', '--input', 'no-equals-sign', '--yes']);
    assert.equal(badInput.code, 2);
    assert.match(badInput.stderr, /is not key=value/);
  });

  it('archons create and token; a viewer gets exit 3 naming the missing permission; a bad token exit 3', async () => {
    ok(await ctl(['archons', 'create', 'vic', '--role', 'viewer']));
    const tok = JSON.parse((await ctl(['archons', 'token', 'vic', '-o', 'json'])).stdout);
    assert.equal(tok.role, 'viewer');
    const list = JSON.parse((await ctl(['archons', 'list', '-o', 'json'])).stdout);
    assert.deepEqual(list.items.map((a: any) => a.aid).sort(), ['admin', 'vic']);
    assert.equal(JSON.parse((await ctl(['archons', 'get', 'vic', '-o', 'json'])).stdout).role, 'viewer');

    const asViewer = { KEEPER_URL: k.baseUrl, KEEPER_TOKEN: tok.token };
    ok(await ctl(['souls', 'list'], { env: asViewer }));
    const denied = await ctl(['souls', 'add', 'vic-host.keeper.test', '--coven', 'web'], { env: asViewer });
    assert.equal(denied.code, 3);
    assert.match(denied.stderr, /Forbidden: /);
    assert.match(denied.stderr, /lacks the permission souls:create/);

    const unauth = await ctl(['souls', 'list'], { env: { KEEPER_URL: k.baseUrl, KEEPER_TOKEN: 'not-a-jwt' } });
    assert.equal(unauth.code, 3);
    assert.match(unauth.stderr, /Unauthorized: /);
  });

  it('services add, list, get', async () => {
    const url = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'motd'),
      path.join(root, 'motd.git'),
      'v3',
    );
    ok(await ctl(['services', 'add', 'motd', '--git', url, '--ref', 'v3']));
    const dup = await ctl(['services', 'add', 'motd', '--git', url, '--ref', 'v3']);
    assert.equal(dup.code, 5);
    assert.deepEqual(
      JSON.parse((await ctl(['services', 'list', '-o', 'json'])).stdout).items.map((s: any) => s.name),
      ['motd'],
    );
    assert.match((await ctl(['services', 'get', 'motd'])).stdout, /version:\s+v3/);
  });

  it('incarnations create follows the run (plain lines when piped) to ready; get and list show it', async () => {
    const r = await ctl(['incarnations', 'create', 'motd-edge', '--service', 'motd', '--coven', 'edge', ...input()]);
    ok(r);
    assert.match(r.stdout, /succeeded: motd-edge is ready/);
    assert.match(r.stderr, new RegExp(`host ${souls[0]!.sid.replace(/\./g, '\\.')}: changed`));
    assert.doesNotMatch(r.stderr, /\x1b\[/, 'no escape codes when not a terminal');
    assert.match(fs.readFileSync(path.join(out, 'etc', 'motd'), 'utf8'), /from keeperctl/);
    const inc = JSON.parse((await ctl(['incarnations', 'get', 'motd-edge', '-o', 'json'])).stdout);
    assert.equal(inc.status, 'ready');
    assert.equal(inc.state.message, 'from keeperctl');
    const list = JSON.parse((await ctl(['incarnations', 'list', '--status', 'ready', '-o', 'json'])).stdout);
    assert.deepEqual(
      list.items.map((i: any) => i.name),
      ['motd-edge'],
    );
  });

  it('run asks first: without a terminal it needs --yes and starts nothing', async () => {
    const before = JSON.parse((await ctl(['incarnations', 'get', 'motd-edge', '-o', 'json'])).stdout).apply_id;
    const r = await ctl(['run', 'motd-edge', 'create', ...input()]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /pass --yes/);
    assert.equal(JSON.parse((await ctl(['incarnations', 'get', 'motd-edge', '-o', 'json'])).stdout).apply_id, before);
  });

  it('a failed run exits 1 with host, step and reason; unlock --retry with a fixed input goes to ready', async () => {
    const r = await ctl([
      'run',
      'motd-edge',
      'create',
      '--yes',
      ...input(['--input', 'package=keeper-no-such-package-zz']),
    ]);
    assert.equal(r.code, 1, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /failed; motd-edge is error_locked/);
    assert.match(r.stdout, new RegExp(`${souls[0]!.sid.replace(/\./g, '\\.')} step 0 \\(motd package\\): failed`));
    assert.match(r.stdout, /keeperctl incarnations unlock motd-edge --retry/);
    assert.match(r.stderr, /failed \(error_locked\)/);

    const locked = await ctl(['run', 'motd-edge', 'create', '--yes', ...input()]);
    assert.equal(locked.code, 5, 'a locked incarnation refuses a new run (409)');

    const retry = await ctl(['incarnations', 'unlock', 'motd-edge', '--retry', '-o', 'json', ...input()]);
    ok(retry);
    assert.equal(JSON.parse(retry.stdout).status, 'succeeded');
  });

  it('history lists the commits; run-report reads a run; upgrade runs and is followed', async () => {
    const hist = JSON.parse((await ctl(['incarnations', 'history', 'motd-edge', '-o', 'json', '--all'])).stdout);
    assert.ok(hist.items.length >= 2, JSON.stringify(hist));
    const last = hist.items[hist.items.length - 1];
    const rep = JSON.parse(
      (await ctl(['incarnations', 'run-report', 'motd-edge', last.apply_id, '-o', 'json'])).stdout,
    );
    assert.equal(rep.status, 'succeeded');
    assert.equal(rep.hosts[0].sid, souls[0]!.sid);
    // Table mode: how long the run took (created_at to finished_at), not how long keeperctl watched.
    const table = await ctl(['incarnations', 'run-report', 'motd-edge', last.apply_id]);
    ok(table);
    const took = ((Date.parse(rep.finished_at) - Date.parse(rep.created_at)) / 1000).toFixed(1);
    assert.ok(Number(took) > 0, took);
    assert.match(
      table.stderr,
      new RegExp(`run ${last.apply_id.replace(/\./g, '\\.')}: succeeded after ${took.replace('.', '\\.')}s;`),
    );
    const up = await ctl(['incarnations', 'upgrade', 'motd-edge', '-o', 'json']);
    ok(up);
    assert.equal(JSON.parse(up.stdout).status, 'succeeded');
  });

  it('run --plan shows the plan with its diff, asks, and applies exactly that plan', async () => {
    const motd = path.join(out, 'etc', 'motd');
    const before = fs.readFileSync(motd, 'utf8');
    // Not a terminal and no --yes: the plan is shown, nothing is applied.
    const asked = await ctl(['run', 'motd-edge', 'create', '--plan', ...input(['--input', 'message=planned text'])]);
    assert.equal(asked.code, 2, asked.stderr);
    assert.match(asked.stderr, /^plan motd-edge\.create\.plan\.\S+ of motd-edge \(create\): ready$/m);
    assert.match(asked.stderr, /~ step 1 \(motd file\): would update .*motd/);
    assert.match(asked.stderr, /^ {6}-.*from keeperctl.*$/m);
    assert.match(asked.stderr, /^ {6}\+.*planned text.*$/m);
    assert.match(asked.stderr, /not asked: standard input is not a terminal/);
    assert.equal(fs.readFileSync(motd, 'utf8'), before, 'a plan applies nothing');

    const applied = await ctl([
      'run',
      'motd-edge',
      'create',
      '--plan',
      '--yes',
      '-o',
      'json',
      ...input(['--input', 'message=planned text']),
    ]);
    ok(applied);
    const planId = /^plan (\S+) of motd-edge/m.exec(applied.stderr)![1];
    const report = JSON.parse(applied.stdout);
    assert.deepEqual([report.status, report.plan_id], ['succeeded', planId]);
    assert.match(fs.readFileSync(motd, 'utf8'), /planned text/);

    // The same again: nothing would change, nothing is applied.
    const same = await ctl([
      'run',
      'motd-edge',
      'create',
      '--plan',
      '--yes',
      ...input(['--input', 'message=planned text']),
    ]);
    ok(same);
    assert.match(same.stdout, /nothing would change on any host of motd-edge; nothing was applied/);
  });

  it('services publish, versions and version; a second publish is 409 (exit 5), an unknown version 404 (exit 4); get/list show the newer version; upgrade --version moves to it', async () => {
    const repo = path.join(root, 'motd.git');
    execFileSync('git', ['-C', repo, 'tag', 'v4'], { stdio: 'pipe' });
    const commit = execFileSync('git', ['-C', repo, 'rev-parse', 'v4^{commit}']).toString().trim();
    const pub = await ctl(['services', 'publish', 'motd', 'v4', '-o', 'json']);
    ok(pub);
    const published = JSON.parse(pub.stdout);
    assert.deepEqual(
      [published.service, published.version, published.commit, published.state_schema_version, published.published_by],
      ['motd', 'v4', commit, 3, 'admin'],
    );
    const again = await ctl(['services', 'publish', 'motd', 'v4']);
    assert.equal(again.code, 5, again.stderr);
    assert.match(again.stderr, /Conflict: version v4 of service motd is already published/);

    const versions = JSON.parse((await ctl(['services', 'versions', 'motd', '-o', 'json'])).stdout);
    assert.deepEqual(
      versions.items.map((v: any) => v.version),
      ['v4', 'v3'],
      'newest first',
    );
    const versionsTable = await ctl(['services', 'versions', 'motd']);
    ok(versionsTable);
    assert.match(versionsTable.stdout.split('\n')[0]!, /^VERSION\s+COMMIT\s+SCHEMA\s+PUBLISHED BY\s+PUBLISHED$/);
    assert.match(versionsTable.stdout, new RegExp(`^v4\\s+${commit}\\s+3\\s+admin\\s`, 'm'));

    const v3 = JSON.parse((await ctl(['services', 'version', 'motd', 'v3', '-o', 'json'])).stdout);
    assert.deepEqual(
      v3.operations.map((o: any) => o.name),
      ['create', 'update'],
    );
    assert.deepEqual(
      v3.operations[0].inputs.find((i: any) => i.name === 'message'),
      { name: 'message', type: 'string', required: false, secret: false, default: 'Welcome' },
    );
    const v3Table = (await ctl(['services', 'version', 'motd', 'v3'])).stdout;
    assert.match(v3Table, /^OPERATION\s+INPUT\s+TYPE\s+REQUIRED\s+DEFAULT\s+SECRET$/m);
    assert.match(v3Table, /^create\s+message\s+string\s+no\s+"Welcome"\s+no$/m);
    assert.match(v3Table, /^update\s+message\s+string\s+yes\s+-\s+no$/m);
    const unknown = await ctl(['services', 'version', 'motd', 'v9']);
    assert.equal(unknown.code, 4, unknown.stderr);
    assert.match(unknown.stderr, /Not Found: version v9 of service motd is not published/);

    const inc = JSON.parse((await ctl(['incarnations', 'get', 'motd-edge', '-o', 'json'])).stdout);
    assert.deepEqual([inc.version, inc.newer_version], ['v3', 'v4']);
    assert.match(
      (await ctl(['incarnations', 'get', 'motd-edge'])).stdout,
      /^newer_version:\s+v4 \(keeperctl incarnations upgrade motd-edge --version v4\)$/m,
    );
    const listTable = (await ctl(['incarnations', 'list'])).stdout;
    assert.match(listTable.split('\n')[0]!, /^NAME\s+SERVICE\s+VERSION\s+NEWER\s+STATUS\s+COVENS\s+DRIFT\s+LAST RUN$/);
    assert.match(listTable, /^motd-edge\s+motd\s+v3\s+v4\s+ready\s+edge\s+off\s+/m);

    const up = await ctl(['incarnations', 'upgrade', 'motd-edge', '--version', 'v4', '-o', 'json']);
    ok(up);
    assert.equal(JSON.parse(up.stdout).status, 'succeeded');
    const after = JSON.parse((await ctl(['incarnations', 'get', 'motd-edge', '-o', 'json'])).stdout);
    assert.deepEqual([after.version, after.newer_version], ['v4', null]);
  });

  it('incarnations plan shows a plan and how to apply it; apply-plan asks, applies exactly it, and refuses it twice (exit 5); plans and runs list them', async () => {
    const motd = path.join(out, 'etc', 'motd');
    const before = fs.readFileSync(motd, 'utf8');
    const planned = await ctl([
      'incarnations',
      'plan',
      'motd-edge',
      'create',
      ...input(['--input', 'message=reviewed plan']),
    ]);
    ok(planned);
    const planId = /^plan (\S+) of motd-edge \(create\): ready$/m.exec(planned.stdout)?.[1];
    assert.ok(planId, planned.stdout);
    assert.match(planned.stdout, /^ {6}\+.*reviewed plan.*$/m);
    assert.match(
      planned.stdout,
      new RegExp(
        `^apply exactly this plan with: keeperctl incarnations apply-plan motd-edge ${planId.replace(/\./g, '\\.')}$`,
        'm',
      ),
    );
    assert.equal(fs.readFileSync(motd, 'utf8'), before, 'a plan applies nothing');

    const asJson = await ctl([
      'incarnations',
      'plan',
      'motd-edge',
      'create',
      '-o',
      'json',
      ...input(['--input', 'message=reviewed plan']),
    ]);
    ok(asJson);
    const other = JSON.parse(asJson.stdout);
    assert.deepEqual([other.incarnation, other.operation, other.status], ['motd-edge', 'create', 'ready']);
    assert.ok(other.summary.would_change >= 1, JSON.stringify(other.summary));
    assert.equal(other.hosts[0].sid, souls[0]!.sid);
    assert.ok(
      other.hosts[0].steps.some((st: any) => st.would_change && typeof st.diff?.content?.unified === 'string'),
      JSON.stringify(other.hosts[0].steps),
    );

    const unasked = await ctl(['incarnations', 'apply-plan', 'motd-edge', planId]);
    assert.equal(unasked.code, 2, unasked.stderr);
    assert.match(
      unasked.stderr,
      /apply exactly plan .* to motd-edge\? \(not asked: standard input is not a terminal\)/,
    );
    assert.equal(fs.readFileSync(motd, 'utf8'), before, 'nothing applied without --yes');

    const applied = await ctl(['incarnations', 'apply-plan', 'motd-edge', planId, '--yes', '-o', 'json']);
    ok(applied);
    const report = JSON.parse(applied.stdout);
    assert.deepEqual([report.status, report.plan_id, report.operation], ['succeeded', planId, 'create']);
    assert.match(fs.readFileSync(motd, 'utf8'), /reviewed plan/);

    const twice = await ctl(['incarnations', 'apply-plan', 'motd-edge', planId, '--yes']);
    assert.equal(twice.code, 5, twice.stderr);
    assert.match(
      twice.stderr,
      new RegExp(`plan ${planId.replace(/\./g, '\\.')} is applied; only a ready plan can be applied`),
    );
    // The other plan was made before this apply committed: the keeper itself refuses it as stale (409).
    const stale = await ctl(['incarnations', 'apply-plan', 'motd-edge', other.plan_id, '--yes']);
    assert.equal(stale.code, 5, stale.stderr);
    assert.match(stale.stderr, /Conflict: /);
    assert.match(stale.stderr, /make a new plan: keeperctl incarnations plan motd-edge <operation>/);
    assert.doesNotMatch(stale.stderr, /--force/);

    const plans = JSON.parse((await ctl(['incarnations', 'plans', 'motd-edge', '-o', 'json', '--all'])).stdout);
    assert.deepEqual(
      plans.items.slice(0, 2).map((x: any) => [x.plan_id, x.status]),
      [
        [other.plan_id, 'ready'],
        [planId, 'applied'],
      ],
    );
    assert.equal(plans.items[1].applied_by, report.apply_id);
    assert.match(
      (await ctl(['incarnations', 'plans', 'motd-edge'])).stdout.split('\n')[0]!,
      /^PLAN ID\s+OPERATION\s+STATUS\s+WOULD CHANGE\s+CREATED\s+EXPIRES\s+APPLIED BY$/,
    );

    const runs = JSON.parse(
      (await ctl(['incarnations', 'runs', 'motd-edge', '--all', '--limit', '2', '-o', 'json'])).stdout,
    );
    const history = JSON.parse((await ctl(['incarnations', 'history', 'motd-edge', '--all', '-o', 'json'])).stdout);
    assert.equal(runs.next_cursor, null, '--all followed the cursors');
    assert.equal(runs.items[0].apply_id, report.apply_id, 'newest first');
    assert.ok(runs.items.length > 2, 'more than one page of 2');
    assert.ok(
      history.items.every((h: any) => runs.items.some((r: any) => r.apply_id === h.apply_id)),
      'every committed run is listed',
    );
    assert.ok(
      runs.items.every((r: any) => !/\.plan\./.test(r.apply_id)),
      'plans are not runs',
    );
    const runsTable = (await ctl(['incarnations', 'runs', 'motd-edge'])).stdout;
    assert.match(runsTable.split('\n')[0]!, /^APPLY ID\s+OPERATION\s+STATUS\s+VERSION\s+HOSTS\s+STARTED\s+FINISHED$/);
    assert.match(
      runsTable,
      new RegExp(`^${report.apply_id.replace(/\./g, '\\.')}\\s+create\\s+succeeded\\s+v4\\s+1: changed 1\\s`, 'm'),
    );

    const noSuch = await ctl(['incarnations', 'plan', 'nothing-here', 'create']);
    assert.equal(noSuch.code, 4, noSuch.stderr);
    assert.match(noSuch.stderr, /Not Found: /);
  });

  it('incarnations plan --service --coven plans the create of an incarnation that does not exist; apply-plan creates it with exactly that plan', async () => {
    const planRoot = path.join(root, 'planned');
    const args = ['--input', `root=${planRoot}`, '--input', 'message=planned create', '--input', 'package=git'];
    const half = await ctl(['incarnations', 'plan', 'motd-planned', 'create', '--service', 'motd', ...args]);
    assert.equal(half.code, 2, half.stderr);
    assert.match(half.stderr, /--service and --coven go together/);

    const planned = await ctl([
      'incarnations',
      'plan',
      'motd-planned',
      'create',
      '--service',
      'motd',
      '--coven',
      'edge',
      ...args,
    ]);
    ok(planned);
    const planId = /^plan (\S+) of motd-planned \(create\): ready$/m.exec(planned.stdout)?.[1];
    assert.ok(planId, planned.stdout);
    assert.match(planned.stdout, /^ {6}\+.*planned create.*$/m);
    assert.match(planned.stdout, /^apply exactly this plan with: keeperctl incarnations apply-plan motd-planned \S+$/m);
    assert.equal(fs.existsSync(path.join(planRoot, 'etc', 'motd')), false, 'a plan writes nothing');
    const missing = await ctl(['incarnations', 'get', 'motd-planned']);
    assert.equal(missing.code, 4, 'the plan of a create creates no incarnation');

    const applied = await ctl(['incarnations', 'apply-plan', 'motd-planned', planId, '--yes', '-o', 'json']);
    ok(applied);
    const report = JSON.parse(applied.stdout);
    assert.deepEqual([report.status, report.plan_id, report.operation], ['succeeded', planId, 'create']);
    assert.match(fs.readFileSync(path.join(planRoot, 'etc', 'motd'), 'utf8'), /planned create/);
    const inc = JSON.parse((await ctl(['incarnations', 'get', 'motd-planned', '-o', 'json'])).stdout);
    assert.deepEqual([inc.status, inc.service, inc.covens], ['ready', 'motd', ['edge']]);

    // An existing incarnation keeps its service and covens: the keeper's 400 names the field (exit 2).
    const again = await ctl([
      'incarnations',
      'plan',
      'motd-planned',
      'update',
      '--service',
      'motd',
      '--coven',
      'edge',
      ...args,
    ]);
    assert.equal(again.code, 2, again.stderr);
    assert.match(again.stderr, /service/);
    // An unknown version of the service is refused before any host is checked, naming it.
    const unknown = await ctl([
      'incarnations',
      'plan',
      'motd-other',
      'create',
      '--service',
      'motd',
      '--coven',
      'edge',
      '--version',
      'v99',
      ...args,
    ]);
    assert.notEqual(unknown.code, 0, unknown.stderr);
    assert.match(unknown.stderr, /v99/);
    await ctl(['incarnations', 'delete', 'motd-planned', '--force', '--yes']);
  });

  it('incarnations drift --interval 2s checks on a schedule (get shows in_sync), --off stops; neither is a usage error', async () => {
    const neither = await ctl(['incarnations', 'drift', 'motd-edge']);
    assert.equal(neither.code, 2, neither.stderr);
    assert.match(neither.stderr, /give either --interval <duration> or --off/);
    const tooOften = await ctl(['incarnations', 'drift', 'motd-edge', '--interval', '1s']);
    assert.equal(tooOften.code, 2, tooOften.stderr);
    assert.match(tooOften.stderr, /\/body\/interval/);

    const on = await ctl(['incarnations', 'drift', 'motd-edge', '--interval', '2s', '-o', 'json']);
    ok(on);
    assert.deepEqual([JSON.parse(on.stdout).drift.interval, JSON.parse(on.stdout).drift.auto_repair], ['2s', false]);
    let drift: any;
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline) {
      drift = JSON.parse((await ctl(['incarnations', 'get', 'motd-edge', '-o', 'json'])).stdout).drift;
      if (drift.status !== 'unchecked') break;
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.equal(drift.status, 'in_sync', JSON.stringify(drift));
    // A check in sync keeps its plan only until the next check is recorded (docs/drift.md): every
    // hour from now on, so the plan shown stays to be read (a check already under way may still
    // replace it once: then the new one is read).
    ok(await ctl(['incarnations', 'drift', 'motd-edge', '--interval', '1h']));
    let checked: any;
    let text = '';
    for (let attempt = 0; attempt < 3; attempt++) {
      drift = JSON.parse((await ctl(['incarnations', 'get', 'motd-edge', '-o', 'json'])).stdout).drift;
      const json = await ctl(['incarnations', 'plan-report', 'motd-edge', drift.plan_id, '-o', 'json']);
      const plain = await ctl(['incarnations', 'plan-report', 'motd-edge', drift.plan_id]);
      if (json.code !== 0 || plain.code !== 0) continue;
      checked = JSON.parse(json.stdout);
      text = plain.stdout;
      break;
    }
    assert.equal(drift.status, 'in_sync', JSON.stringify(drift));
    assert.match(
      drift.plan_id,
      /^motd-edge\.create\.drift\./,
      'a plan of the last committed operation, made by the drift check',
    );
    assert.deepEqual(drift.drifted_sids, []);
    assert.ok(drift.checks_in_sync >= 1, JSON.stringify(drift));
    assert.deepEqual([checked?.plan_id, checked?.status, checked?.summary.would_change], [drift.plan_id, 'ready', 0]);
    assert.match(text, new RegExp(`^no change on 1 host\\(s\\): ${souls[0]!.sid.replace(/\./g, '\\.')}$`, 'm'));
    const shown = (await ctl(['incarnations', 'get', 'motd-edge'])).stdout;
    assert.match(shown, /^drift:\s+every 1h: in_sync at \S+$/m);
    assert.match(shown, /^drift_in_sync:\s+[1-9]\d* checks?, the last at \S+$/m);
    assert.match((await ctl(['incarnations', 'list'])).stdout, /^motd-edge\s+.*\sin_sync\s/m);

    const off = await ctl(['incarnations', 'drift', 'motd-edge', '--off']);
    ok(off);
    assert.match(off.stdout, /^motd-edge: drift checks off$/m);
    const got = JSON.parse((await ctl(['incarnations', 'get', 'motd-edge', '-o', 'json'])).stdout);
    assert.equal(got.drift.interval, null);
    assert.match((await ctl(['incarnations', 'get', 'motd-edge'])).stdout, /^drift:\s+off$/m);
  });

  it('incarnations delete asks first; a service without destroy is 409 (exit 5); with destroy it runs and frees the name; --force removes the record only; create --version', async () => {
    const noDestroy = await ctl(['incarnations', 'delete', 'motd-edge', '--yes']);
    assert.equal(noDestroy.code, 5, noDestroy.stderr);
    assert.match(noDestroy.stderr, /Conflict: service motd@v4 has no destroy operation/);
    assert.match(noDestroy.stderr, /keeperctl incarnations delete motd-edge --force/);
    assert.equal(JSON.parse((await ctl(['incarnations', 'get', 'motd-edge', '-o', 'json'])).stdout).status, 'ready');

    // A service with destroy: the fixture plus a destroy scenario that leaves a visible farewell.
    const src = path.join(root, 'motd-d-src');
    fs.cpSync(path.join(repoRoot(), 'test', 'fixtures', 'services', 'motd'), src, { recursive: true });
    fs.mkdirSync(path.join(src, 'scenario', 'destroy'), { recursive: true });
    fs.writeFileSync(
      path.join(src, 'scenario', 'destroy', 'main.yml'),
      [
        'description: Take the message of the day down.',
        'input:',
        '  root:',
        '    type: string',
        'tasks:',
        '  - name: motd file',
        '    module: core.file.present',
        '    params:',
        '      path: "${input.root}/etc/motd"',
        '      content: "decommissioned\\n"',
        '      mode: "0644"',
        '',
      ].join('\n'),
    );
    ok(
      await ctl([
        'services',
        'add',
        'motd-d',
        '--git',
        gitRepoFrom(src, path.join(root, 'motd-d.git'), 'v1'),
        '--ref',
        'v1',
      ]),
    );
    const gone = path.join(root, 'out-gone');
    ok(
      await ctl([
        'incarnations',
        'create',
        'motd-gone',
        '--service',
        'motd-d',
        '--coven',
        'edge',
        '--input',
        `root=${gone}`,
        '--input',
        'package=git',
        '-o',
        'json',
      ]),
    );

    const unasked = await ctl(['incarnations', 'delete', 'motd-gone']);
    assert.equal(unasked.code, 2, unasked.stderr);
    assert.match(unasked.stderr, /run destroy on every host of motd-gone and then remove it\? \(not asked/);
    const del = await ctl(['incarnations', 'delete', 'motd-gone', '--yes']);
    ok(del);
    assert.match(del.stdout, /succeeded: motd-gone is destroyed and removed/);
    assert.equal(fs.readFileSync(path.join(gone, 'etc', 'motd'), 'utf8'), 'decommissioned\n');
    const missing = await ctl(['incarnations', 'get', 'motd-gone']);
    assert.equal(missing.code, 4, missing.stderr);
    const runs = JSON.parse((await ctl(['incarnations', 'runs', 'motd-gone', '-o', 'json'])).stdout);
    assert.deepEqual(
      runs.items.map((r: any) => [r.operation, r.status]),
      [
        ['destroy', 'succeeded'],
        ['create', 'succeeded'],
      ],
      'its runs stay readable',
    );

    const forcedOut = path.join(root, 'out-forced');
    ok(
      await ctl([
        'incarnations',
        'create',
        'motd-forced',
        '--service',
        'motd',
        '--version',
        'v3',
        '--coven',
        'edge',
        '--input',
        `root=${forcedOut}`,
        '--input',
        'package=git',
        '-o',
        'json',
      ]),
    );
    const created = JSON.parse((await ctl(['incarnations', 'get', 'motd-forced', '-o', 'json'])).stdout);
    assert.deepEqual(
      ['version', 'newer_version'].map((f) => created[f]),
      ['v3', 'v4'],
    );
    const forced = await ctl(['incarnations', 'delete', 'motd-forced', '--force', '--yes', '-o', 'json']);
    ok(forced);
    assert.deepEqual(JSON.parse(forced.stdout), {
      name: 'motd-forced',
      removed: true,
      forced: true,
      history: '/v1/incarnations/motd-forced/history',
    });
    assert.equal((await ctl(['incarnations', 'get', 'motd-forced'])).code, 4);
    assert.ok(fs.existsSync(path.join(forcedOut, 'etc', 'motd')), 'force touches no host');
    assert.equal(
      JSON.parse((await ctl(['incarnations', 'history', 'motd-forced', '-o', 'json'])).stdout).items.length,
      1,
      'its history stays readable',
    );
    const twice = await ctl(['incarnations', 'delete', 'motd-forced', '--force', '--yes']);
    assert.equal(twice.code, 4, twice.stderr);
  });

  it('souls covens replaces the covens and says what changes; souls delete asks, removes; an unknown soul is exit 4', async () => {
    const sid = 'cli-covens.keeper.test';
    ok(await ctl(['souls', 'add', sid, '--coven', 'web']));
    const r = await ctl(['souls', 'covens', sid, 'db', 'cache', '-o', 'json']);
    ok(r);
    const changed = JSON.parse(r.stdout);
    assert.deepEqual(
      [changed.soul.covens, changed.gained_covens, changed.lost_covens, changed.converging, changed.left_incarnations],
      [['db', 'cache'], ['db', 'cache'], ['web'], false, []],
      'a host not onboarded yet has nothing brought to it',
    );
    const back = await ctl(['souls', 'covens', sid, 'web']);
    ok(back);
    assert.match(back.stdout, /^cli-covens\.keeper\.test now carries web \(gained: web; lost: db, cache\)$/m);
    assert.deepEqual(JSON.parse((await ctl(['souls', 'get', sid, '-o', 'json'])).stdout).covens, ['web']);
    const missing = await ctl(['souls', 'covens', 'nobody.keeper.test', 'web']);
    assert.equal(missing.code, 4, missing.stderr);

    assert.equal(
      (await ctl(['souls', 'delete', sid])).code,
      2,
      'deleting asks first; without a terminal it needs --yes',
    );
    const deleted = await ctl(['souls', 'delete', sid, '--yes', '-o', 'json']);
    ok(deleted);
    assert.deepEqual(JSON.parse(deleted.stdout), { sid, deleted: true });
    assert.equal((await ctl(['souls', 'get', sid])).code, 4);
    assert.equal((await ctl(['souls', 'delete', sid, '--yes'])).code, 4);
  });

  it('every command has --help with an example; completion scripts for bash and zsh', async () => {
    const commands = [
      [],
      ['souls'],
      ['souls', 'list'],
      ['souls', 'get'],
      ['souls', 'add'],
      ['souls', 'covens'],
      ['souls', 'issue-token'],
      ['souls', 'revoke'],
      ['souls', 'delete'],
      ['souls', 'check'],
      ['services'],
      ['services', 'add'],
      ['services', 'list'],
      ['services', 'get'],
      ['services', 'publish'],
      ['services', 'versions'],
      ['services', 'version'],
      ['incarnations'],
      ['incarnations', 'list'],
      ['incarnations', 'create'],
      ['incarnations', 'get'],
      ['incarnations', 'history'],
      ['incarnations', 'runs'],
      ['incarnations', 'run-report'],
      ['incarnations', 'plan'],
      ['incarnations', 'plans'],
      ['incarnations', 'plan-report'],
      ['incarnations', 'apply-plan'],
      ['incarnations', 'unlock'],
      ['incarnations', 'upgrade'],
      ['incarnations', 'drift'],
      ['incarnations', 'delete'],
      ['archons'],
      ['archons', 'list'],
      ['archons', 'get'],
      ['archons', 'create'],
      ['archons', 'token'],
      ['run'],
      ['login'],
      ['logout'],
      ['use'],
      ['clusters'],
      ['completion'],
    ];
    for (const c of commands) {
      const r = await ctl([...c, '--help']);
      assert.equal(r.code, 0, `${c.join(' ')} --help: ${r.stderr}`);
      assert.match(r.stdout, /Examples:\n\s+keeperctl /, `${c.join(' ') || '(top)'} --help has an example`);
    }
    const bash = await ctl(['completion'], { env: { SHELL: '/bin/bash' } });
    ok(bash);
    assert.match(bash.stdout, /complete -o bashdefault -o default -F _keeperctl_yargs_completions keeperctl/);
    const zsh = await ctl(['completion'], { env: { SHELL: '/usr/bin/zsh' } });
    ok(zsh);
    assert.match(zsh.stdout, /compdef _keeperctl_yargs_completions keeperctl/);
    // What the scripts call on <TAB>: the subcommands of `souls` and `incarnations`, from the same command table as --help.
    const tab = await ctl(['--get-yargs-completions', 'keeperctl', 'souls', '']);
    ok(tab);
    for (const c of ['list', 'get', 'add', 'covens', 'issue-token', 'revoke', 'delete', 'check'])
      assert.ok(tab.stdout.split('\n').includes(c), tab.stdout);
    const incTab = await ctl(['--get-yargs-completions', 'keeperctl', 'incarnations', '']);
    ok(incTab);
    for (const c of ['runs', 'plan', 'plans', 'plan-report', 'apply-plan', 'drift', 'delete'])
      assert.ok(incTab.stdout.split('\n').includes(c), incTab.stdout);
  });

  it('on a terminal, run draws a live per-host display and ends with the outcome (tmux)', async () => {
    const env = { ...baseEnv(), TMUX_TMPDIR: root, TERM: 'xterm-256color' };
    const cmd = [
      process.execPath,
      BIN,
      'run',
      'motd-edge',
      'create',
      '--yes',
      ...input(['--input', 'message=on a terminal']),
    ]
      .map((a) => `'${a.replace(/'/g, `'\\''`)}'`)
      .join(' ');
    execFileSync(
      'tmux',
      ['new-session', '-d', '-s', 'ctl', '-x', '120', '-y', '30', `${cmd}; echo EXIT=$?; sleep 60`],
      { env },
    );
    let screen = '';
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      screen = execFileSync('tmux', ['capture-pane', '-p', '-t', 'ctl'], { env }).toString();
      if (/EXIT=\d+/.test(screen)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    execFileSync('tmux', ['kill-session', '-t', 'ctl'], { env });
    assert.match(screen, /EXIT=0/, screen);
    // The block was redrawn in place: one header and one count line remain on the screen, not one per poll.
    assert.equal(screen.match(/^run motd-edge\/create /gm)?.length, 1, screen);
    assert.match(screen, /^hosts 1\/1 done: changed 1, ok 0, failed 0, unknown 0, skipped 0$/m);
    assert.match(
      screen,
      new RegExp(`^  ${souls[0]!.sid.replace(/\./g, '\\.')}\\s+changed\\s+3 steps, \\d changed$`, 'm'),
    );
    assert.match(screen, /succeeded: motd-edge is ready/);
  });
});
