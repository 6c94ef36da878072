// One secret boundary for every output of a host (issue 45, H-1 and H-3; docs/secrets.md "Output"),
// on the real stack with a real soul and the real secrets store. Run 1 writes a file holding a canary
// from the store. Then:
// - an execution writes the canary to another file (exec.conf): the next plan of a step writing
//   plain text there shows "secret content changed", no content, no size, no plain hash, no canary;
// - a responder's dry-run execution of core.file.present over the file run 1 wrote shows no old
//   content, size or plain hash;
// - a later run whose steps carry no secret `cat`s the file: by a glob (no tainted path named: the
//   output is scrubbed to the placeholder), by its name (withheld), by its name with `output: safe`
//   (shown, scrubbed). The canary is in neither the run report, run_steps.output, the soul's ledger
//   nor a dump of the keeper's database;
// - a guarded `core.cmd.run` copies the secret file (`cp`) and another hard-links it (`ln`): a dry-run
//   core.file.present over the copy (same content) and over the link (same inode, with content the
//   soul has not seen before appended through it) shows no content, size or plain hash, and says why.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import knex from 'knex';
import { clientFor, operatorToken } from '../api/helpers';
import { api, gitRepoFrom, settled, startSouls, tempDir, waitFor, type TestSoul } from '../runs/keeper';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { deleteSecret, putSecret, secretStoreCall } from '../support/secretstore';
import { filesUnder, pgDump } from './leaks';

function writeService(dir: string, name: string, prefix: string): void {
  const file = (f: string) => `"\${input.root + '/' + soulprint.self.fqdn + '/${f}'}"`;
  const files: Record<string, string> = {
    'service.yml': `name: ${name}\nstate_schema_version: 1\nsecrets:\n  - ${prefix}\n`,
    'scenario/create/main.yml': [
      'input:',
      '  root: {type: string}',
      'tasks:',
      '  - name: app config',
      '    module: core.file.rendered',
      '    params:',
      `      path: ${file('app.conf')}`,
      '      mode: "0600"',
      '      template: app.conf.tmpl',
      '      vars:',
      `        db_password: "\${secretstore('${prefix}db', 'password')}"`,
      '',
    ].join('\n'),
    'scenario/update/main.yml': [
      'input:',
      '  root: {type: string}',
      'tasks:',
      // Names no tainted path (a glob): only the scrub stands between the canary and the report.
      '  - name: show by glob',
      '    module: core.cmd.run',
      '    params:',
      '      argv: [sh, -c, "cat ${input.root}/*/app.conf"]',
      '  - name: show by name',
      '    module: core.cmd.run',
      '    params:',
      `      argv: [cat, ${file('app.conf')}]`,
      '  - name: show safe',
      '    module: core.cmd.run',
      '    output: safe',
      '    params:',
      `      argv: [cat, ${file('app.conf')}]`,
      '  - name: exec file',
      '    module: core.file.present',
      '    params:',
      `      path: ${file('exec.conf')}`,
      '      content: "plain\\n"',
      '',
    ].join('\n'),
    'templates/app.conf.tmpl': '[db]\npassword = {{ .db_password }}\n',
  };
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
}

describe('secrets: one boundary for every output of a host', function () {
  this.timeout(300_000);
  const id = randomBytes(4).toString('hex');
  const CANARY = `canary-bnd-${randomBytes(12).toString('hex')}`;
  const prefix = `secret/keeper/services/sbnd-${id}/`;
  const PLACE = `«secret:${prefix}db#password»`;
  const inc = `sbnd-${id}`;
  const forbidden: string[] = [CANARY];
  const forbid = (content: string) => {
    const h = createHash('sha256').update(content).digest();
    forbidden.push(h.toString('hex'), h.toString('base64'));
  };
  const clean = (where: string, text: string) => {
    for (const f of forbidden)
      assert.ok(!text.includes(f), `${where} holds ${f === CANARY ? 'the canary' : 'a plain hash'}`);
  };
  let root: string;
  let k: TestKeeper;
  let soul: TestSoul;
  let responder: ReturnType<typeof clientFor>;
  const out = (f: string) => path.join(root, 'out', soul.sid, f);

  const execution = async (body: Record<string, unknown>, as = clientFor(k)) => {
    const r = await as('POST', '/v1/executions', { body: { target: { covens: ['sbnd'] }, ...body } });
    assert.equal(r.status, 202, r.text);
    return waitFor(
      `execution ${r.body.id}`,
      async () => {
        const e = await as('GET', `/v1/executions/${r.body.id}`);
        assert.equal(e.status, 200, e.text);
        return e.body.status === 'done' ? e.body : undefined;
      },
      90_000,
      200,
    );
  };

  before(async () => {
    root = tempDir('secrets-boundary-');
    await putSecret('secret', `keeper/services/sbnd-${id}/db`, { password: CANARY });
    k = await startTestKeeper({
      // The cluster-admin's execution writes this service's secret: its role may reference it.
      mutate: (doc) => {
        doc['executions'] = { secret_prefixes: { 'cluster-admin': [prefix] } };
      },
    });
    [soul] = (await startSouls(k, path.join(root, 'souls'), [['sbnd']])) as [TestSoul];
    const src = path.join(root, 'src');
    writeService(src, 'sbnd', prefix);
    const git = gitRepoFrom(src, path.join(root, 'repo'), 'v1');
    assert.equal((await api(k, 'POST', '/v1/services', { name: 'sbnd', git, ref: 'v1' })).status, 201);
    responder = clientFor(k, await operatorToken(k, `responder-${id}`, 'responder'));
    const created = await api(k, 'POST', '/v1/incarnations', {
      name: inc,
      service: 'sbnd',
      covens: ['sbnd'],
      input: { root: path.join(root, 'out') },
    });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    assert.equal((await settled(k, inc, 120_000)).status, 'ready');
    const written = fs.readFileSync(out('app.conf'), 'utf8');
    assert.equal(written, `[db]\npassword = ${CANARY}\n`);
    forbid(written);
    forbid(CANARY);
  });
  after(async () => {
    await soul?.run.kill();
    await k?.stop();
    await deleteSecret('secret', `keeper/services/sbnd-${id}/db`).catch(() => undefined);
    await secretStoreCall('DELETE', `secret/metadata/keeper/services/sbnd-${id}/db`).catch(() => undefined);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("a responder's dry-run execution over the file a run wrote a secret to shows no content, size or plain hash", async function () {
    const e = await execution(
      { module: 'core.file.present', params: { path: out('app.conf'), content: 'replaced\n' }, dry_run: true },
      responder,
    );
    assert.equal(e.hosts[0].status, 'changed', JSON.stringify(e.hosts[0]));
    const c = e.hosts[0].diff?.content;
    assert.ok(c, `a content change is shown: ${JSON.stringify(e.hosts[0])}`);
    assert.deepEqual(
      [c.secret, c.note, c.unified, c.before?.size, c.after?.size],
      [true, 'secret content changed', undefined, undefined, undefined],
      JSON.stringify(c),
    );
    assert.match(c.before.digest, /^[0-9a-f]{64}$/, 'a keyed digest only');
    clean('the execution', JSON.stringify(e));
    assert.equal(fs.readFileSync(out('app.conf'), 'utf8'), `[db]\npassword = ${CANARY}\n`, 'a check changes nothing');
  });

  it('a secret an execution writes taints its path: the next plan of that file shows no value', async function () {
    const e = await execution({
      module: 'core.file.present',
      params: { path: out('exec.conf'), content: `secretstore:${prefix}db#password` },
    });
    assert.deepEqual(e.summary, { ok: 0, changed: 1, failed: 0, unknown: 0 }, JSON.stringify(e.hosts));
    assert.equal(fs.readFileSync(out('exec.conf'), 'utf8'), CANARY);
    const made = await api(k, 'POST', `/v1/incarnations/${inc}/plans`, {
      operation: 'update',
      input: { root: path.join(root, 'out') },
    });
    assert.equal(made.status, 202, JSON.stringify(made.body));
    const p = (await api(k, 'GET', `/v1/incarnations/${inc}/plans/${made.body.plan_id}?wait=30s`)).body;
    assert.equal(p.status, 'ready', JSON.stringify(p));
    const c = p.hosts[0].steps.find((s: any) => s.name === 'exec file').diff.content;
    assert.deepEqual(
      [c.secret, c.note, c.unified, c.before?.size],
      [true, 'secret content changed', undefined, undefined],
      JSON.stringify(c),
    );
    clean('the plan', JSON.stringify(p));
  });

  it('a later run that cats the secret file: scrubbed by value, withheld by path, shown scrubbed when `output: safe`; no canary in the report, run_steps or the ledger', async function () {
    const run = await api(k, 'POST', `/v1/incarnations/${inc}/runs`, {
      operation: 'update',
      input: { root: path.join(root, 'out') },
    });
    assert.equal(run.status, 202, JSON.stringify(run.body));
    assert.equal((await settled(k, inc, 120_000)).status, 'ready');
    const report = (await api(k, 'GET', run.body.run)).body;
    assert.equal(report.status, 'succeeded', JSON.stringify(report));
    const step = (name: string) => report.hosts[0].steps.find((s: any) => s.name === name);
    assert.ok(step('show by glob').output.includes(`password = ${PLACE}`), step('show by glob').output);
    assert.equal(
      step('show by name').output,
      `output withheld: this step may read ${out('app.conf')}, which holds a secret; mark the step \`output: safe\` to show it`,
    );
    assert.ok(step('show safe').output.includes(`password = ${PLACE}`), step('show safe').output);
    clean('the run report', JSON.stringify(report));

    const db = knex({ client: 'pg', connection: k.db.dsn });
    try {
      const outputs = (await db('run_steps').where({ apply_id: run.body.apply_id }).pluck('output')) as string[];
      assert.equal(outputs.length, 4);
      clean('run_steps.output', outputs.join('\n'));
    } finally {
      await db.destroy();
    }
    // filesUnder reads bytes as latin1: the placeholder's UTF-8 as the same.
    const ledger = filesUnder(soul.dir);
    const withheld = 'output withheld: this step may read';
    assert.ok(
      ledger.some((f) => f.text.includes(Buffer.from(`password = ${PLACE}`).toString('latin1'))),
      `the ledger kept the scrubbed output (${ledger.map((f) => path.relative(soul.dir, f.file)).join(', ')})`,
    );
    assert.ok(
      ledger.some((f) => f.text.includes(withheld)),
      'the ledger kept the withheld text in place of the output',
    );
    // The soul's own ledger may keep a file's plain hash (the host holds the file itself), never the value.
    for (const f of ledger)
      assert.ok(!f.text.includes(CANARY), `the soul's ${path.relative(soul.dir, f.file)} holds the canary`);
    clean('a dump of the database', await pgDump(k.db.dsn));
  });

  const cmd = async (argv: string[], creates: string) => {
    const e = await execution({ module: 'core.cmd.run', params: { argv, creates } });
    assert.deepEqual(e.summary, { ok: 0, changed: 1, failed: 0, unknown: 0 }, JSON.stringify(e.hosts));
  };
  /** A responder's dry run of core.file.present over `file`: shown as a secret file's, saying `why`. */
  const planOver = async (file: string, why: string) => {
    const e = await execution(
      { module: 'core.file.present', params: { path: file, content: 'replaced\n' }, dry_run: true },
      responder,
    );
    const h = e.hosts[0];
    assert.equal(h.status, 'changed', JSON.stringify(h));
    const c = h.diff?.content;
    assert.ok(c, `a content change is shown: ${JSON.stringify(h)}`);
    assert.deepEqual(
      [c.secret, c.note, c.withheld, c.unified, c.before?.size, c.after?.size],
      [true, 'secret content changed', why, undefined, undefined, undefined],
      JSON.stringify(c),
    );
    assert.match(c.before.digest, /^[0-9a-f]{64}$/, 'a keyed digest only');
    assert.ok(h.output.startsWith(`output withheld: this step may read ${file}, which holds a secret`), h.output);
    assert.ok(!JSON.stringify(e).includes('[db]'), `no content of the file: ${JSON.stringify(h)}`);
    clean(`the dry run over ${path.basename(file)}`, JSON.stringify(e));
  };

  it('a copy (cp) of the secret file is treated as the file: no content, size or plain hash, and says why', async function () {
    await cmd(['cp', out('app.conf'), out('app.conf.bak')], out('app.conf.bak'));
    await planOver(out('app.conf.bak'), `content identical to a secret file (${out('app.conf')})`);
    assert.equal(
      fs.readFileSync(out('app.conf.bak'), 'utf8'),
      `[db]\npassword = ${CANARY}\n`,
      'a check changes nothing',
    );
  });

  it('a hard link (ln) of the secret file is treated as the file, by its inode, after content is added through it', async function () {
    await cmd(['ln', out('app.conf'), out('app.conf.link')], out('app.conf.link'));
    // Through the link the file gets content whose digest the keeper never recorded: only its inode is known.
    await cmd(
      ['sh', '-c', `echo '# edited in place' >> ${out('app.conf.link')}; touch ${out('edited')}`],
      out('edited'),
    );
    const linked = fs.readFileSync(out('app.conf'), 'utf8');
    assert.equal(linked, `[db]\npassword = ${CANARY}\n# edited in place\n`);
    forbid(linked);
    await planOver(out('app.conf.link'), `the same file as a secret file (${out('app.conf')}), by a hard link`);
  });
});
