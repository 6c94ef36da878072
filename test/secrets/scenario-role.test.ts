// The keeper reads scenario secrets with the scenario role's token (issue 28), end to end on the
// real stack. The keeper under test has a scenario prefix of its own, `secret/t28-<id>/`, which the
// keeper's own role cannot reach (its policy reads `secret/data/keeper*`): so a run that reads a
// secret there and stores its secret input there, and a private git service cloned through a
// credential_ref there, work only if the keeper used the scenario token. A credential_ref (git
// service, SSH soul) or a secret input naming the keeper's own secret is refused at registration
// with a 400 naming the field and the rule, and again at use for rows older than the rule. A
// scenario role whose policy can read the keeper's secrets stops the keeper at start.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { silentLogger } from '../../common/logger';
import { startKeeper } from '../../keeper/server';
import { StartupError } from '../../platform/runtime';
import { gitRepoFrom, settled, startSouls, tempDir, type TestSoul } from '../runs/keeper';
import { fixtureService } from '../lint/paths';
import { startGitHttpServer, type GitHttpServer } from '../support/git-http';
import { cleanupKeeperFiles, initTestKeeper, startTestKeeper, type TestKeeper } from '../support/keeper';
import { appRoleToken, deleteSecret, putSecret, secretStoreCall } from '../support/secretstore';
import { stackEnv, stackFile } from '../support/stack-env';
import { createKeeperAppRole, createScenarioAppRole, useScenarioRole, type TestAppRole } from './approle';
import { writeCanaryService } from './service';

describe('secrets: the keeper reads scenario secrets and credential_refs with the scenario role only', function () {
  this.timeout(300_000);
  const id = randomBytes(4).toString('hex');
  const PREFIX = `secret/t28-${id}/`;
  const CANARY_DB = `t28-db-${randomBytes(10).toString('hex')}`;
  const CANARY_INPUT = `t28-input-${randomBytes(10).toString('hex')}`;
  const GIT_TOKEN = `t28-git-${randomBytes(10).toString('hex')}`;
  const inc = `t28-${id}`;
  /** The incarnation's secrets_key: where its secret inputs live (set by the first test). */
  let life = 'none';
  let root: string;
  let role: TestAppRole;
  let k: TestKeeper;
  let souls: TestSoul[] = [];
  let server: GitHttpServer;
  let privateUrl: string;

  const api = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(`${k.baseUrl}${p}`, {
      method,
      headers: { Authorization: `Bearer ${k.adminToken}`, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as any, text };
  };
  const ownRefs = () => [
    'secretstore:secret/keeper#signing_key',
    `secretstore:secret/${k.secretName}#dsn`,
    `secretstore:${PREFIX}../keeper#signing_key`,
    `secretstore:${PREFIX}app/%2e%2e/x#token`,
    'secretstore:secret/keeper/services/app/db#password',
  ];
  const RULE = new RegExp(
    `must name a secret below secretstore\\.scenario_prefix \\(${PREFIX.replace(/\//g, '\\/')}\\)`,
  );

  before(async () => {
    root = tempDir('secrets-t28-');
    role = await createScenarioAppRole(root, [PREFIX]);
    await putSecret('secret', `t28-${id}/app/db`, { password: CANARY_DB });
    await putSecret('secret', `t28-${id}/git/motd`, { token: GIT_TOKEN, username: 'deploy' });
    // A private repository over HTTP, answering only with the credential stored below the prefix.
    const src = path.join(root, 'motd');
    fs.cpSync(fixtureService('motd'), src, { recursive: true });
    const git = (cwd: string, ...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', ...args], { cwd, stdio: 'pipe' });
    git(src, 'init', '-q', '-b', 'main');
    git(src, 'add', '-A');
    git(src, 'commit', '-q', '-m', 'motd');
    git(src, 'tag', 'v1');
    git(root, 'clone', '-q', '--bare', src, path.join(root, 'served', 'motd.git'));
    server = await startGitHttpServer(path.join(root, 'served'), 'deploy', GIT_TOKEN);
    privateUrl = `${server.url}motd.git`;
    k = await startTestKeeper({ mutate: (doc) => useScenarioRole(doc, role, PREFIX) });
    souls = await startSouls(k, path.join(root, 'souls'), [['t28']]);
  });
  after(async () => {
    await Promise.all(souls.map((s) => s.run.kill()));
    await k?.stop();
    await server?.close();
    await role?.remove();
    for (const name of [`t28-${id}/app/db`, `t28-${id}/git/motd`])
      await deleteSecret('secret', name).catch(() => undefined);
    const runs = await secretStoreCall('LIST', `secret/metadata/t28-${id}/incarnations/${inc}/${life}/runs/`).catch(
      () => ({ data: { keys: [] } }),
    );
    for (const r of runs.data.keys as string[])
      await deleteSecret('secret', `t28-${id}/incarnations/${inc}/${life}/runs/${r}`).catch(() => undefined);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("a run reads its secret and stores its secret input below a prefix the keeper's own role cannot reach", async () => {
    // The control: with its own token the keeper could neither read nor write there.
    const keeperToken = await appRoleToken('keeper', stackFile('approle-secret-id'));
    const own = await fetch(`${stackEnv().SECRETSTORE_ADDR}/v1/secret/data/t28-${id}/app/db`, {
      headers: { 'X-Vault-Token': keeperToken },
    });
    assert.equal(own.status, 403);

    const src = path.join(root, 'app');
    writeCanaryService(src, { name: 'app', prefix: `${PREFIX}app/`, readPath: `${PREFIX}app/db` });
    assert.equal(
      (
        await api('POST', '/v1/services', {
          name: 'app',
          git: gitRepoFrom(src, path.join(root, 'app-repo'), 'v1'),
          ref: 'v1',
        })
      ).status,
      201,
    );
    const created = await api('POST', '/v1/incarnations', {
      name: inc,
      service: 'app',
      covens: ['t28'],
      input: { root: path.join(root, 'out'), api_token: CANARY_INPUT },
    });
    assert.equal(created.status, 202, created.text);
    const done = await settled(k, inc, 120_000);
    assert.equal(done.status, 'ready', JSON.stringify(done));
    assert.equal(
      fs.readFileSync(path.join(root, 'out', souls[0]!.sid, 'app.conf'), 'utf8'),
      `[db]\npassword = ${CANARY_DB}\n[api]\ntoken = ${CANARY_INPUT}\n`,
    );
    // The input's value went below this keeper's prefix, written with the scenario token, under the
    // incarnation's life (its creating run's apply_id: a later incarnation of the name has another).
    life = created.body.apply_id;
    const storedAt = `${PREFIX}incarnations/${inc}/${life}/runs/${created.body.apply_id}`;
    assert.equal(done.state.token_ref, `secretstore:${storedAt}#api_token`);
    assert.equal(
      (await secretStoreCall('GET', `secret/data/t28-${id}/incarnations/${inc}/${life}/runs/${created.body.apply_id}`))
        .data.data.api_token,
      CANARY_INPUT,
    );
  });

  it('registers a private git service through a credential_ref below the prefix', async () => {
    const r = await api('POST', '/v1/services', {
      name: 'motd-private',
      git: privateUrl,
      ref: 'v1',
      credential_ref: `secretstore:${PREFIX}git/motd#token`,
    });
    assert.equal(r.status, 201, r.text);
    assert.ok(server.stats.authorized > 0, 'the repository was cloned with the credential');
    assert.ok(!r.text.includes(GIT_TOKEN));
  });

  it("refuses a credential_ref or a secret input naming the keeper's own secret at registration: 400 naming the field and the rule, nothing stored", async () => {
    for (const ref of ownRefs()) {
      const svc = await api('POST', '/v1/services', {
        name: 'motd-own',
        git: privateUrl,
        ref: 'v1',
        credential_ref: ref,
      });
      assert.equal(svc.status, 400, `${ref}: ${svc.text}`);
      assert.equal(svc.body.errors[0].path, '/body/credential_ref');
      if (!ref.includes('%') && !ref.includes('..')) assert.match(svc.body.errors[0].message, RULE, ref);
      const soul = await api('POST', '/v1/souls', {
        sid: `own-${id}.keeper.test`,
        transport: 'ssh',
        covens: ['t28-ssh'],
        ssh: { address: '127.0.0.1', port: 9, user: 'root', credential_ref: ref, trust_on_first_use: true },
      });
      assert.equal(soul.status, 400, `${ref}: ${soul.text}`);
      assert.deepEqual(
        soul.body.errors.map((e: any) => e.path),
        ['/body/ssh/credential_ref'],
      );
      const input = await api('POST', '/v1/incarnations', {
        name: `own-${id}`,
        service: 'app',
        covens: ['t28'],
        input: { root: path.join(root, 'own'), api_token: ref },
      });
      assert.equal(input.status, 400, `${ref}: ${input.text}`);
      assert.equal(input.body.errors[0].path, '/body/input/api_token');
    }
    assert.equal((await api('GET', '/v1/services/motd-own')).status, 404);
    assert.equal((await api('GET', `/v1/souls/own-${id}.keeper.test`)).status, 404);
    assert.equal((await api('GET', `/v1/incarnations/own-${id}`)).status, 404);
    assert.ok(!fs.existsSync(path.join(root, 'own')));
  });

  it('refuses it at use too, for rows written before the rule: nothing is read, the reason names the rule', async () => {
    const db = k.keeper.runtime.db;
    await db('services')
      .where({ name: 'motd-private' })
      .update({ credential_ref: 'secretstore:secret/keeper#signing_key' });
    const before = server.stats.authorized;
    const pub = await api('POST', '/v1/services/motd-private/versions', { ref: 'main' });
    assert.equal(pub.status, 422, pub.text);
    assert.match(pub.body.detail, RULE);
    assert.equal(server.stats.authorized, before, 'nothing was fetched with any credential');

    const sid = `use-${id}.keeper.test`;
    const reg = await api('POST', '/v1/souls', {
      sid,
      transport: 'ssh',
      covens: ['t28-ssh'],
      ssh: {
        address: '127.0.0.1',
        port: 9,
        user: 'root',
        credential_ref: `secretstore:${PREFIX}ssh/none#private_key`,
        trust_on_first_use: true,
      },
    });
    assert.equal(reg.status, 201, reg.text);
    await db.raw(`update souls set ssh = jsonb_set(ssh, '{credential_ref}', to_jsonb(?::text)) where sid = ?`, [
      'secretstore:secret/keeper#signing_key',
      sid,
    ]);
    const check = await api('POST', `/v1/souls/${sid}/check`);
    assert.equal(check.status, 200, check.text);
    assert.equal(check.body.reachable, false);
    assert.match(check.body.reason, RULE);
    assert.match(check.body.reason, /nothing was read/);
  });

  it("refuses to start when the scenario role's policy can read the keeper's own secrets", async () => {
    const wide = await createKeeperAppRole(root);
    const files = await initTestKeeper({
      mutate: (doc) => {
        doc.secretstore.scenario_auth = { method: 'approle', role_id: wide.roleId, secret_id_file: wide.secretIdFile };
      },
    });
    try {
      await assert.rejects(
        startKeeper(files.config, silentLogger),
        (err: unknown) =>
          err instanceof StartupError &&
          err.message.includes(
            `cannot use the scenario role of the secrets store (secretstore.scenario_auth): the scenario role (secretstore.scenario_auth.role_id "${wide.roleId}") can read the keeper's own secret secretstore:secret/${files.secretName} (database.dsn_ref)`,
          ),
      );
    } finally {
      await cleanupKeeperFiles(files);
      await wide.remove();
    }
  });
});
