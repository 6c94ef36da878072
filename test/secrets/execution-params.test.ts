// Secret references in a one-off execution's parameters (issue 34, docs/executions.md "Secrets"): a
// real soul gets the value from the secrets store at dispatch, and the value is nowhere else: not in
// the execution's record or events (the reference only, the host's output scrubbed), not in the
// Temporal history of its workflow, not in a dump of the keeper's database. A malformed reference or
// one outside secretstore.scenario_prefix is refused before anything starts, naming the parameter.
// Issue 45 H-2: a reference must also lie under executions.secret_prefixes of the caller's role (none
// by default); a role without core.cmd.run sets no parameter that runs a program (`validate`); a
// validator refusing content that holds a secret shows its exit status only.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import knex from 'knex';
import { clientFor } from '../api/helpers';
import { assertProblem as problem, operatorToken } from '../api/helpers';
import { startSouls, tempDir, waitFor, type TestSoul } from '../runs/keeper';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { deleteSecret, putSecret } from '../support/secretstore';
import { pgDump, temporalHistories } from './leaks';

describe('secrets in execution parameters: resolved at dispatch only', function () {
  this.timeout(180_000);
  const id = randomBytes(4).toString('hex');
  const CANARY = `canary-exec-${randomBytes(12).toString('hex')}`;
  const name = `keeper/services/exec-${id}/token`;
  const ref = `secretstore:secret/${name}#value`;
  // Another service's secret under the same scenario prefix: no role here is configured to name it.
  const OTHER = `canary-other-${randomBytes(12).toString('hex')}`;
  const otherName = `keeper/services/other-${id}/token`;
  const otherRef = `secretstore:secret/${otherName}#value`;
  let k: TestKeeper;
  let api: ReturnType<typeof clientFor>;
  let root: string;
  let souls: TestSoul[];

  before(async () => {
    root = tempDir('exec-secrets-');
    await putSecret('secret', name, { value: CANARY });
    await putSecret('secret', otherName, { value: OTHER });
    k = await startTestKeeper({
      mutate: (doc) => {
        doc['executions'] = {
          secret_prefixes: { 'cluster-admin': [`secret/keeper/services/exec-${id}/`] },
          modules: { responder: ['core.file.present', 'core.service.restarted'] },
        };
      },
    });
    api = clientFor(k);
    souls = await startSouls(k, path.join(root, 'souls'), [['sec']]);
  });
  after(async () => {
    await Promise.all((souls ?? []).map((s) => s.run.kill()));
    await k?.stop();
    await deleteSecret('secret', name).catch(() => undefined);
    await deleteSecret('secret', otherName).catch(() => undefined);
    fs.rmSync(root, { recursive: true, force: true });
  });

  const finished = (execution: string) =>
    waitFor(
      `execution ${execution}`,
      async () => {
        const r = await api('GET', `/v1/executions/${execution}`);
        assert.equal(r.status, 200, r.text);
        return r.body.status === 'done' ? r.body : undefined;
      },
      90_000,
      200,
    );

  it('the host gets the value; the record, events, output, Temporal history and database hold the reference', async () => {
    const file = path.join(root, 'secret.out');
    const r = await api('POST', '/v1/executions', {
      body: {
        module: 'core.cmd.run',
        // The command writes the value to a file and also prints it: the output must not carry it back.
        params: { argv: ['sh', '-c', 'printf %s "$1" > "$2"; echo "token=$1"', 'sh', ref, file] },
        target: { covens: ['sec'] },
      },
    });
    assert.equal(r.status, 202, r.text);
    const e = await finished(r.body.id);
    assert.equal(fs.readFileSync(file, 'utf8'), CANARY, 'the soul ran the command with the value');
    assert.deepEqual(e.summary, { ok: 0, changed: 1, failed: 0, unknown: 0 });
    assert.equal(e.params.argv[4], ref, 'the record keeps the reference');
    assert.ok(!e.hosts[0].output.includes(CANARY), e.hosts[0].output);
    assert.match(e.hosts[0].output, /token=«secret:secret\/keeper\/services\/exec-[0-9a-f]+\/token#value»/);

    const events = await fetch(`${k.baseUrl}/v1/executions/${r.body.id}/events`, {
      headers: { Authorization: `Bearer ${k.adminToken}` },
    });
    const stream = await events.text();
    assert.match(stream, /event: end/);
    assert.ok(!stream.includes(CANARY), 'the event stream holds no value');
    const history = await temporalHistories(`execution-${r.body.id}`);
    assert.ok(history.json.length > 0);
    assert.ok(!history.json.includes(CANARY), 'the Temporal history holds no value');
    const dump = await pgDump(k.db.dsn);
    assert.ok(dump.includes(ref), 'the database holds the reference');
    assert.ok(!dump.includes(CANARY), 'the database holds no value');
  });

  it('a reference to a missing field fails the host before anything is sent', async () => {
    const file = path.join(root, 'never.out');
    const r = await api('POST', '/v1/executions', {
      body: {
        module: 'core.cmd.run',
        params: { argv: ['sh', '-c', 'printf %s "$1" > "$2"', 'sh', `secretstore:secret/${name}#nope`, file] },
        target: { covens: ['sec'] },
      },
    });
    assert.equal(r.status, 202, r.text);
    const e = await finished(r.body.id);
    assert.deepEqual(e.summary, { ok: 0, changed: 0, failed: 1, unknown: 0 });
    assert.match(e.hosts[0].output, /has no field "nope"; nothing was sent to this host/);
    assert.equal(fs.existsSync(file), false, 'the command did not run');
  });

  it('refuses a malformed reference and one outside scenario_prefix with 400 naming the parameter', async () => {
    const post = (arg: string) =>
      api('POST', '/v1/executions', {
        body: { module: 'core.cmd.run', params: { argv: ['echo', arg] }, target: { covens: ['sec'] } },
      });
    const db = knex({ client: 'pg', connection: k.db.dsn });
    const count = async () => Number((await db('executions').count({ n: '*' }))[0]!.n);
    const before = await count();
    const malformed = await post(`secretstore:secret/${name}`);
    problem(malformed, 400, /secretstore:<path>#<field>/);
    assert.equal(malformed.body.errors[0].path, '/body/params/argv/1');
    const outside = await post('secretstore:secret/keeper#signing_key');
    problem(outside, 400, /outside secretstore\.scenario_prefix/);
    assert.equal(outside.body.errors[0].path, '/body/params/argv/1');
    assert.equal(await count(), before, 'nothing was recorded or started');
    await db.destroy();
  });

  const count = async () => {
    const db = knex({ client: 'pg', connection: k.db.dsn });
    try {
      return Number((await db('executions').count({ n: '*' }))[0]!.n);
    } finally {
      await db.destroy();
    }
  };

  it("refuses a responder's validate (a program run as root) with 403 naming the parameter and what it needs", async () => {
    const responder = clientFor(k, await operatorToken(k, `resp-${id}`, 'responder'));
    const before = await count();
    const target = path.join(root, 'validated.conf');
    // The probe of issue 45: the validator prints the candidate (the secret) reversed, which no scrub catches.
    for (const validate of [
      ['sh', '-c', 'rev "$0" >&2; exit 1', '%s'],
      ['sh', '-c', 'touch "$0.ran"; exit 0', '%s'],
    ]) {
      const r = await responder('POST', '/v1/executions', {
        body: {
          module: 'core.file.present',
          params: { path: target, content: 'x', validate },
          target: { covens: ['sec'] },
        },
      });
      problem(r, 403, /params\.validate runs a program on the host \(as root\).*needs core\.cmd\.run/);
      assert.deepEqual(r.body.errors, [{ path: '/body/params/validate', message: r.body.detail }]);
    }
    assert.equal(await count(), before, 'nothing was recorded or started');
    assert.equal(fs.existsSync(target), false);
    assert.equal(fs.existsSync(`${target}.ran`), false, 'the validator never ran');
    // The module itself stays allowed without a program.
    const plain = await responder('POST', '/v1/executions', {
      body: { module: 'core.file.present', params: { path: target, content: 'plain\n' }, target: { covens: ['sec'] } },
    });
    assert.equal(plain.status, 202, plain.text);
    assert.deepEqual((await finished(plain.body.id)).summary, { ok: 0, changed: 1, failed: 0, unknown: 0 });
    assert.equal(fs.readFileSync(target, 'utf8'), 'plain\n');
  });

  it('binds references to executions.secret_prefixes of the role: none by default, only the configured ones', async () => {
    const responder = clientFor(k, await operatorToken(k, `resp2-${id}`, 'responder'));
    const before = await count();
    const target = path.join(root, 'bound.conf');
    const post = (client: typeof api, content: string) =>
      client('POST', '/v1/executions', {
        body: { module: 'core.file.present', params: { path: target, content }, target: { covens: ['sec'] } },
      });
    const none = await post(responder, ref);
    problem(
      none,
      403,
      /your role may reference no secret in an execution \(executions\.secret_prefixes\.responder is not configured\)/,
    );
    assert.equal(none.body.errors[0].path, '/body/params/content');
    // cluster-admin is configured for its own service's prefix only: another service's secret is refused.
    const other = await post(api, otherRef);
    problem(
      other,
      403,
      /outside the secrets your role may reference in an execution \(executions\.secret_prefixes\.cluster-admin: secret\/keeper\/services\/exec-/,
    );
    assert.equal(other.body.errors[0].path, '/body/params/content');
    assert.ok(!other.text.includes(OTHER));
    assert.equal(await count(), before, 'nothing was recorded or started');
    assert.equal(fs.existsSync(target), false);
  });

  it('a validator refusing content that holds a secret shows its exit status, never its output', async () => {
    const target = path.join(root, 'refused.conf');
    const r = await api('POST', '/v1/executions', {
      body: {
        module: 'core.file.present',
        // What the validator prints is the secret reversed and base64-encoded: no scrub of the value finds it.
        params: { path: target, content: ref, validate: ['sh', '-c', 'rev "$0" >&2; base64 "$0"; exit 3', '%s'] },
        target: { covens: ['sec'] },
      },
    });
    assert.equal(r.status, 202, r.text);
    const e = await finished(r.body.id);
    assert.deepEqual(e.summary, { ok: 0, changed: 0, failed: 1, unknown: 0 });
    const out = e.hosts[0].output as string;
    assert.match(
      out,
      /validate: sh refused the new content \(exit 3\); the live file is unchanged \(the validator's output is withheld: the content holds a secret\)$/,
    );
    const reversed = [...CANARY].reverse().join('');
    const b64 = Buffer.from(CANARY).toString('base64');
    for (const form of [CANARY, reversed, b64, b64.slice(0, 20)]) assert.ok(!out.includes(form), out);
    assert.equal(fs.existsSync(target), false, 'the live file was not written');
  });
});
