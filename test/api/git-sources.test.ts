// Git sources by policy and credentials by reference (issue 13 item 7, issue 12 item 5), on the real
// stack: a keeper whose policy allows http to 127.0.0.1 only refuses file://, other hosts and URLs
// with credentials at registration; a private repository (git http-backend behind basic auth) is
// cloned through a credential_ref, and afterwards the credential is in no answer, row, log line,
// git config or file of the keeper's service cache. Git's errors reach the run report summarized.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knex from 'knex';
import { createLogger } from '../../common/logger';
import { fixtureService } from '../lint/paths';
import { startGitHttpServer, type GitHttpServer } from '../support/git-http';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { deleteSecret, putSecret } from '../support/secretstore';
import { assertProblem, call } from './helpers';

function grepFiles(dir: string, needle: string): string[] {
  const hits: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && fs.readFileSync(p).includes(needle)) hits.push(p);
    }
  };
  walk(dir);
  return hits;
}

describe('services: git sources by policy, credentials by reference', function () {
  this.timeout(180_000);
  const canary = `canary-${randomBytes(12).toString('hex')}`;
  const secretName = `keeper/services/git-${randomBytes(4).toString('hex')}`;
  const credentialRef = `secretstore:secret/${secretName}#token`;
  let tk: TestKeeper;
  let work: string;
  let server: GitHttpServer;
  let repoUrl: string;
  const logLines: string[] = [];
  const answers: string[] = [];

  const api = async (method: string, p: string, body?: unknown) => {
    const a = await call(tk.baseUrl, method, p, { token: tk.adminToken, body });
    answers.push(a.text);
    return a;
  };

  before(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'git-sources-'));
    // The private repository: the motd fixture service, tagged v1, in a bare repository served over HTTP.
    const src = path.join(work, 'src');
    fs.cpSync(fixtureService('motd'), src, { recursive: true });
    const git = (cwd: string, ...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', ...args], { cwd, stdio: 'pipe' });
    git(src, 'init', '-q', '-b', 'main');
    git(src, 'add', '-A');
    git(src, 'commit', '-q', '-m', 'motd');
    git(src, 'tag', 'v1');
    git(work, 'clone', '-q', '--bare', src, path.join(work, 'served', 'motd.git'));
    server = await startGitHttpServer(path.join(work, 'served'), 'deploy', canary);
    repoUrl = `${server.url}motd.git`;
    await putSecret('secret', secretName, { token: canary, username: 'deploy' });
    tk = await startTestKeeper({
      log: createLogger({ level: 'debug', write: (line) => logLines.push(line) }),
      mutate: (doc) => {
        doc.services.git = { schemes: ['https', 'http'], hosts: ['127.0.0.1'], timeout: '30s' };
      },
    });
  });
  after(async () => {
    await tk?.stop();
    await server?.close();
    await deleteSecret('secret', secretName).catch(() => undefined);
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('refuses file:// URLs when the policy does not list file', async () => {
    for (const git of [`file://${path.join(work, 'src')}`, 'file:///etc']) {
      const r = await api('POST', '/v1/services', { name: `local-${randomBytes(3).toString('hex')}`, git, ref: 'v1' });
      assertProblem(
        r,
        400,
        /uses the scheme "file", which this keeper does not allow \(services\.git\.schemes: https, http\)/,
      );
      assert.equal(r.body.errors[0].path, '/body/git');
    }
  });

  it('refuses hosts off the allow-list (the secrets store on localhost, any other host)', async () => {
    for (const git of [
      'http://localhost:8200/v1/sys/health',
      'https://git.example.com/ops/motd.git',
      'ssh://git@127.0.0.1/motd.git',
    ]) {
      const r = await api('POST', '/v1/services', { name: `off-${randomBytes(3).toString('hex')}`, git, ref: 'v1' });
      assertProblem(r, 400);
      assert.match(r.body.detail, /not in this keeper's allow-list|does not allow/);
    }
  });

  it('refuses credentials in the URL with a pointer to credential_ref, echoing none of them', async () => {
    for (const git of [`http://deploy:${canary}@127.0.0.1/motd.git`, `https://${canary}@127.0.0.1/motd.git`]) {
      const r = await api('POST', '/v1/services', { name: 'with-creds', git, ref: 'v1' });
      assertProblem(r, 400, /must not carry credentials .*credential_ref: "secretstore:<path>#<field>"/);
      assert.ok(!r.text.includes(canary));
    }
    assert.equal((await api('GET', '/v1/services/with-creds')).status, 404);
  });

  it('clones a private repository through credential_ref; without it the registration is refused with a summarized reason', async () => {
    let r = await api('POST', '/v1/services', {
      name: 'private-motd',
      git: repoUrl,
      ref: 'v1',
      credential_ref: credentialRef,
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.credential_ref, credentialRef);
    // Without the credential the keeper cannot clone it: refused at registration (422), with git's
    // refusal summarized, and nothing is stored.
    r = await api('POST', '/v1/services', { name: 'public-motd', git: repoUrl, ref: 'v1' });
    assert.equal(r.status, 422, r.text);
    assert.equal(r.body.errors[0].path, '/body/ref');
    assert.match(
      String(r.body.detail),
      /git clone: the repository refused access \(give the service a credential_ref, or check the one it has\)/,
    );
    assert.doesNotMatch(
      String(r.body.detail),
      /fatal:|could not read|Authentication|terminal prompts/i,
      "git's own words are not passed on",
    );
    assert.equal((await api('GET', '/v1/services/public-motd')).status, 404, 'nothing was stored');

    const input = { root: path.join(work, 'out'), message: 'hello', package: 'git' };
    r = await api('POST', '/v1/incarnations', {
      name: 'private-one',
      service: 'private-motd',
      covens: ['nobody-here'],
      input,
      allow_empty: true,
    });
    assert.equal(r.status, 202, r.text);
    const ok = await waitSettled('private-one');
    assert.equal(ok.status, 'ready', JSON.stringify(ok.last_run));
    assert.ok(server.stats.authorized > 0, 'the keeper fetched through the authenticated server');
  });

  it('leaves the credential in no answer, row, log line, git config or cached file', async () => {
    for (const p of ['/v1/services', '/v1/services/private-motd', '/v1/incarnations', '/v1/incarnations/private-one']) {
      assert.equal((await api('GET', p)).status, 200);
    }
    assert.ok(answers.length > 10);
    assert.deepEqual(
      answers.filter((a) => a.includes(canary)),
      [],
      'no API answer holds the credential',
    );
    assert.ok(logLines.length > 0);
    assert.deepEqual(
      logLines.filter((l) => l.includes(canary)),
      [],
      'no log line holds it',
    );

    const db = knex({ client: 'pg', connection: tk.db.dsn, pool: { min: 0, max: 1 } });
    try {
      const tables = (await db.raw(`select tablename from pg_tables where schemaname = 'public'`)).rows.map(
        (t: { tablename: string }) => t.tablename,
      );
      assert.ok(tables.includes('services') && tables.includes('incarnation_runs'));
      for (const t of tables) {
        const rows = (await db.raw(`select coalesce(string_agg(x::text, ''), '') as dump from "${t}" x`)).rows[0]
          .dump as string;
        assert.ok(!rows.includes(canary), `table ${t} holds the credential`);
      }
      assert.equal((await db('services').where({ name: 'private-motd' }).first()).credential_ref, credentialRef);
    } finally {
      await db.destroy();
    }

    const cache = tk.config.services.cache_dir;
    const mirrors = fs.readdirSync(path.join(cache, 'repos')).filter((d) => d.endsWith('.git'));
    assert.ok(mirrors.length >= 1, 'the private mirror exists');
    for (const m of mirrors) {
      const config = fs.readFileSync(path.join(cache, 'repos', m, 'config'), 'utf8');
      assert.ok(!config.includes(canary) && !config.includes('deploy:'), `${m}/config holds no credential`);
    }
    assert.deepEqual(grepFiles(cache, canary), [], 'no file under the service cache holds it');
  });

  async function waitSettled(name: string): Promise<any> {
    const deadline = Date.now() + 90_000;
    for (;;) {
      const r = await api('GET', `/v1/incarnations/${name}`);
      if (r.status === 200 && r.body.status !== 'applying') return r.body;
      if (Date.now() > deadline) throw new Error(`${name} did not settle: ${r.text}`);
      await new Promise((res) => setTimeout(res, 250));
    }
  }
});
