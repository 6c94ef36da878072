// Secret references in a one-off execution's parameters (issue 34, docs/executions.md "Secrets"): a
// real soul gets the value from the secrets store at dispatch, and the value is nowhere else: not in
// the execution's record or events (the reference only, the host's output scrubbed), not in the
// Temporal history of its workflow, not in a dump of the keeper's database. A malformed reference or
// one outside secretstore.scenario_prefix is refused before anything starts, naming the parameter.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import knex from 'knex';
import { assertProblem, clientFor } from '../api/helpers';
import { startRunKeeper, startSouls, tempDir, waitFor, type TestSoul } from '../runs/keeper';
import type { TestKeeper } from '../support/keeper';
import { deleteSecret, putSecret } from '../support/secretstore';
import { pgDump, temporalHistories } from './leaks';

describe('secrets in execution parameters: resolved at dispatch only', function () {
  this.timeout(180_000);
  const id = randomBytes(4).toString('hex');
  const CANARY = `canary-exec-${randomBytes(12).toString('hex')}`;
  const name = `keeper/services/exec-${id}/token`;
  const ref = `secretstore:secret/${name}#value`;
  let k: TestKeeper;
  let api: ReturnType<typeof clientFor>;
  let root: string;
  let souls: TestSoul[];

  before(async () => {
    root = tempDir('exec-secrets-');
    await putSecret('secret', name, { value: CANARY });
    k = await startRunKeeper();
    api = clientFor(k);
    souls = await startSouls(k, path.join(root, 'souls'), [['sec']]);
  });
  after(async () => {
    await Promise.all((souls ?? []).map((s) => s.run.kill()));
    await k?.stop();
    await deleteSecret('secret', name).catch(() => undefined);
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
    assertProblem(malformed, 400, /secretstore:<path>#<field>/);
    assert.equal(malformed.body.errors[0].path, '/body/params/argv/1');
    const outside = await post('secretstore:secret/keeper#signing_key');
    assertProblem(outside, 400, /outside secretstore\.scenario_prefix/);
    assert.equal(outside.body.errors[0].path, '/body/params/argv/1');
    assert.equal(await count(), before, 'nothing was recorded or started');
    await db.destroy();
  });
});
