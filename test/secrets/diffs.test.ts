// No secret in any diff, hash or report (issue 28, part 3; docs/secrets.md "Diffs and hashes"), on the
// real stack with a real soul: run 1 writes a file whose content holds a canary secret from the store.
// A drift check over that file (edited by hand) and a plan writing plain text to the same path say
// "secret content changed" and show neither content nor a plain hash; applying that plan reports the
// same; once the keeper wrote plain text there, the next plan shows the real unified diff again, as
// a file that never held a secret always does. Then the canary hunt: neither the canary nor the plain
// SHA-256 (hex, base64) of any content that held it is in any REST or MCP answer, the /ui plan page,
// keeperctl plan-report, a pg_dump, the cache, the Temporal histories or the keeper's log.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createLogger } from '../../common/logger';
import { operatorToken } from '../api/helpers';
import { callTool, connectMcp } from '../mcp/client';
import { api, gitRepoFrom, settled, startSouls, tempDir, waitFor, type TestSoul } from '../runs/keeper';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { freePort } from '../support/ports';
import { repoRoot } from '../support/repo';
import { deleteSecret, putSecret, secretStoreCall } from '../support/secretstore';
import { pgDump, redisDump, temporalHistories } from './leaks';
import { launch, newPage, signIn } from '../ui/browser';

function writeService(dir: string, name: string, prefix: string): void {
  const files: Record<string, string> = {
    'service.yml': `name: ${name}\nstate_schema_version: 1\nsecrets:\n  - ${prefix}\n`,
    'scenario/create/main.yml': [
      'input:',
      '  root: {type: string}',
      '  note: {type: string, default: first}',
      'tasks:',
      '  - name: app config',
      '    module: core.file.rendered',
      '    params:',
      "      path: \"${input.root + '/' + soulprint.self.fqdn + '/app.conf'}\"",
      '      mode: "0600"',
      '      template: app.conf.tmpl',
      '      vars:',
      `        db_password: "\${secretstore('${prefix}db', 'password')}"`,
      '  - name: notes',
      '    module: core.file.present',
      '    params:',
      "      path: \"${input.root + '/' + soulprint.self.fqdn + '/notes.txt'}\"",
      '      content: "${input.note}\\n"',
      '',
    ].join('\n'),
    'scenario/update/main.yml': [
      'input:',
      '  root: {type: string}',
      '  text: {type: string}',
      '  note: {type: string, default: first}',
      'tasks:',
      '  - name: app config',
      '    module: core.file.present',
      '    params:',
      "      path: \"${input.root + '/' + soulprint.self.fqdn + '/app.conf'}\"",
      '      mode: "0600"',
      '      content: "plain = ${input.text}\\n"',
      '  - name: notes',
      '    module: core.file.present',
      '    params:',
      "      path: \"${input.root + '/' + soulprint.self.fqdn + '/notes.txt'}\"",
      '      content: "${input.note}\\n"',
      '',
    ].join('\n'),
    'templates/app.conf.tmpl': '[db]\npassword = {{ .db_password }}\n',
  };
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
}

describe('secrets: no secret in any diff, hash or report', function () {
  this.timeout(300_000);
  const id = randomBytes(4).toString('hex');
  const CANARY = `canary-diff-${randomBytes(12).toString('hex')}`;
  const prefix = `secret/keeper/services/sdiff-${id}/`;
  const inc = `sdiff-${id}`;
  const keeperLog: string[] = [];
  /** Everything a viewer must never read: the canary, and the plain hashes of each content that held it. */
  const forbidden: string[] = [CANARY];
  const forbid = (content: string) => {
    const h = createHash('sha256').update(content).digest();
    forbidden.push(h.toString('hex'), h.toString('base64'), h.toString('base64url').replace(/=+$/, ''));
  };
  const workflows: string[] = [];
  let root: string;
  let k: TestKeeper;
  let soul: TestSoul;
  let mcpAddr: string;
  let viewer: string;
  let secretPlan: string;
  let driftPlan: string;
  let runId: string;
  const conf = () => path.join(root, 'out', soul.sid, 'app.conf');

  const clean = (where: string, text: string) => {
    for (const f of forbidden)
      assert.ok(
        !text.includes(f),
        `${where} holds ${f === CANARY ? 'the canary' : `a plain hash (${f.slice(0, 8)}…)`}`,
      );
  };
  const get = async (token: string, p: string) => {
    const res = await fetch(`${k.baseUrl}${p}`, {
      headers: { Authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(40_000),
    });
    return { status: res.status, text: await res.text() };
  };
  const planOf = async (input: Record<string, unknown>) => {
    const made = await api(k, 'POST', `/v1/incarnations/${inc}/plans`, { operation: 'update', input });
    assert.equal(made.status, 202, JSON.stringify(made.body));
    workflows.push(made.body.plan_id);
    const p = (await api(k, 'GET', `/v1/incarnations/${inc}/plans/${made.body.plan_id}?wait=30s`)).body;
    assert.equal(p.status, 'ready', JSON.stringify(p));
    return p;
  };
  const step = (p: any, name: string) => p.hosts[0].steps.find((s: any) => s.name === name);
  const assertSecretChange = (where: string, s: any, created = false) => {
    const c = s.diff?.content;
    assert.ok(c, `${where}: a content change is shown: ${JSON.stringify(s)}`);
    assert.deepEqual(
      [c.secret, c.note, c.unified, c.unified_withheld, c.before?.size, c.after?.size],
      [true, 'secret content changed', undefined, undefined, undefined, undefined],
      `${where}: ${JSON.stringify(c)}`,
    );
    if (created) assert.equal(c.before, undefined);
    else assert.match(c.before.digest, /^[0-9a-f]{64}$/, `${where}: a keyed digest`);
    assert.match(c.after.digest, /^[0-9a-f]{64}$/, `${where}: a keyed digest`);
  };

  before(async () => {
    root = tempDir('secrets-diffs-');
    mcpAddr = `127.0.0.1:${await freePort()}`;
    await putSecret('secret', `keeper/services/sdiff-${id}/db`, { password: CANARY });
    k = await startTestKeeper({
      mutate: (doc) => {
        doc.listen.mcp = { addr: mcpAddr };
        doc.logging.level = 'debug';
      },
      log: createLogger({ level: 'debug', write: (l) => keeperLog.push(l) }),
    });
    [soul] = (await startSouls(k, path.join(root, 'souls'), [['sdiff']])) as [TestSoul];
    const src = path.join(root, 'src');
    writeService(src, 'sdiff', prefix);
    const git = gitRepoFrom(src, path.join(root, 'repo'), 'v1');
    assert.equal((await api(k, 'POST', '/v1/services', { name: 'sdiff', git, ref: 'v1' })).status, 201);
    viewer = await operatorToken(k, `viewer-${id}`, 'viewer');
  });
  after(async () => {
    await api(k, 'PUT', `/v1/incarnations/${inc}/drift-check`, { interval: null }).catch(() => undefined);
    await soul?.run.kill();
    await k?.stop();
    await deleteSecret('secret', `keeper/services/sdiff-${id}/db`).catch(() => undefined);
    await secretStoreCall('DELETE', `secret/metadata/keeper/services/sdiff-${id}/db`).catch(() => undefined);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('run 1 writes the secret; a drift check over the hand-edited file says "secret content changed" with keyed digests only', async () => {
    const created = await api(k, 'POST', '/v1/incarnations', {
      name: inc,
      service: 'sdiff',
      covens: ['sdiff'],
      input: { root: path.join(root, 'out') },
    });
    assert.equal(created.status, 202, JSON.stringify(created.body));
    workflows.push(created.body.apply_id);
    assert.equal((await settled(k, inc, 120_000)).status, 'ready');
    const written = fs.readFileSync(conf(), 'utf8');
    assert.equal(written, `[db]\npassword = ${CANARY}\n`);
    forbid(written);
    forbid(CANARY);
    const report = (await api(k, 'GET', `/v1/incarnations/${inc}/runs/${created.body.apply_id}`)).body;
    const first = report.hosts[0].steps[0];
    assert.equal(first.status, 'changed');
    assertSecretChange('run 1 report', first, true);

    // Edited by hand (still holding the secret): the drift check plans the create again.
    const edited = `${written}# tuned by hand\n`;
    fs.writeFileSync(conf(), edited);
    forbid(edited);
    assert.equal((await api(k, 'PUT', `/v1/incarnations/${inc}/drift-check`, { interval: '2s' })).status, 200);
    const d = await waitFor(
      'the edit found as drift',
      async () => {
        const x = (await api(k, 'GET', `/v1/incarnations/${inc}`)).body.drift;
        return x.status === 'drifted' ? x : undefined;
      },
      60_000,
      250,
    );
    assert.equal((await api(k, 'PUT', `/v1/incarnations/${inc}/drift-check`, { interval: null })).status, 200);
    driftPlan = d.plan_id;
    workflows.push(driftPlan);
    const p = (await api(k, 'GET', `/v1/incarnations/${inc}/plans/${driftPlan}`)).body;
    const s = step(p, 'app config');
    assert.equal(s.would_change, true);
    assertSecretChange('the drift check', s);
    assert.equal(fs.readFileSync(conf(), 'utf8'), edited, 'a check changes nothing');
  });

  it('a plan writing plain text over the secret file shows "secret content changed", no old content, no plain hash; its run reports the same', async () => {
    const p = await planOf({ root: path.join(root, 'out'), text: 'plain-one', note: 'second' });
    secretPlan = p.plan_id;
    const s = step(p, 'app config');
    assert.equal(s.would_change, true);
    assertSecretChange('the plan', s);
    // A file that never held a secret keeps showing its real diff.
    assert.match(step(p, 'notes').diff.content.unified, /\n-first\n\+second\n$/);

    const run = await api(k, 'POST', `/v1/incarnations/${inc}/runs`, { plan_id: secretPlan });
    assert.equal(run.status, 202, JSON.stringify(run.body));
    runId = run.body.apply_id;
    workflows.push(runId);
    assert.equal((await settled(k, inc, 120_000)).status, 'ready');
    assert.equal(fs.readFileSync(conf(), 'utf8'), 'plain = plain-one\n');
    const report = (await api(k, 'GET', run.body.run)).body;
    assert.equal(report.status, 'succeeded', JSON.stringify(report));
    assertSecretChange('the run report', report.hosts[0].steps[0]);
  });

  it('once the keeper wrote plain text there, the next plan shows the real unified diff', async () => {
    const p = await planOf({ root: path.join(root, 'out'), text: 'plain-two', note: 'second' });
    const c = step(p, 'app config').diff.content;
    assert.equal(c.secret, undefined);
    assert.match(c.unified, /\n-plain = plain-one\n\+plain = plain-two\n$/);
    assert.match(c.before.digest, /^[0-9a-f]{64}$/);
    assert.equal(c.before.sha256, undefined, 'no plain hash, of any file');
  });

  it('leaves neither the canary nor its plain hash in any answer, page, CLI output, row, cache key, history or log', async () => {
    assert.ok(secretPlan && runId && driftPlan, 'the earlier tests ran');
    const paths = [
      `/v1/incarnations/${inc}`,
      `/v1/incarnations/${inc}/plans`,
      `/v1/incarnations/${inc}/plans/${secretPlan}`,
      `/v1/incarnations/${inc}/plans/${driftPlan}`,
      `/v1/incarnations/${inc}/runs`,
      `/v1/incarnations/${inc}/runs/${runId}`,
      `/v1/incarnations/${inc}/runs/${runId}/events`,
      `/v1/incarnations/${inc}/runs/${workflows[0]}`,
    ];
    for (const [who, token] of [
      ['admin', k.adminToken],
      ['viewer', viewer],
    ] as const) {
      for (const p of paths) {
        const a = await get(token, p);
        assert.equal(a.status, 200, `${who} GET ${p}: ${a.text}`);
        clean(`${who} GET ${p}`, a.text);
      }
      const client: Client = await connectMcp(mcpAddr, token);
      try {
        for (const [tool, args] of [
          ['get-plan', { name: inc, plan_id: secretPlan }],
          ['get-plan', { name: inc, plan_id: driftPlan }],
          ['get-run', { name: inc, apply_id: runId }],
        ] as const) {
          const r = await callTool(client, tool, args);
          assert.equal(r.isError, false, `${who} ${tool}: ${r.text}`);
          assert.ok(r.text.includes('secret content changed'), `${who} ${tool} says the secret content changed`);
          clean(`${who} MCP ${tool}`, r.text + JSON.stringify(r.data));
        }
      } finally {
        await client.close();
      }
    }

    // keeperctl plan-report, as the viewer.
    const ctl = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [path.join(repoRoot(), 'bin', 'keeperctl'), 'incarnations', 'plan-report', inc, secretPlan],
        {
          env: {
            PATH: process.env['PATH'],
            HOME: root,
            XDG_CONFIG_HOME: path.join(root, '.config'),
            KEEPER_URL: k.baseUrl,
            KEEPER_TOKEN: viewer,
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let out = '';
      child.stdout.on('data', (b: Buffer) => {
        out += b.toString();
      });
      child.stderr.on('data', (b: Buffer) => {
        out += b.toString();
      });
      child.on('close', (code) => resolve({ code, out }));
    });
    assert.equal(ctl.code, 0, ctl.out);
    assert.match(ctl.out, /secret content changed: [0-9a-f]{12} -> [0-9a-f]{12}/);
    assert.match(ctl.out, /^ {6}\+second$/m, 'the notes file shows its diff');
    clean('keeperctl plan-report', ctl.out);

    // /ui: the plan page as the viewer sees it, with every answer it fetched.
    const browser = await launch();
    try {
      const { context, page } = await newPage(browser, k.baseUrl);
      const fetched: Promise<string>[] = [];
      page.on('response', (r) => {
        if (r.url().includes('/v1/')) fetched.push(r.text().catch(() => ''));
      });
      await signIn(page, viewer);
      for (const plan of [secretPlan, driftPlan]) {
        await page.goto(`/ui/incarnations/${inc}/plans/${plan}`);
        await page.getByTestId('diff-withheld').first().waitFor({ state: 'attached', timeout: 20_000 });
        await page.waitForLoadState('networkidle');
        for (const d of await page.locator('details:not([open]) > summary').all())
          await d.click().catch(() => undefined);
        const html = await page.content();
        assert.match(html, /secret content changed/);
        clean(`/ui plan ${plan}`, html);
      }
      clean('/ui fetches', (await Promise.all(fetched)).join('\n'));
      await context.close();
    } finally {
      await browser.close();
    }

    const dump = await pgDump(k.db.dsn);
    assert.ok(
      dump.includes(secretPlan) && dump.includes('secret content changed'),
      'the dump is of the right database',
    );
    clean('pg_dump', dump);
    clean('the cache', await redisDump());
    for (const w of workflows) {
      const h = await temporalHistories(w);
      assert.ok(h.count >= 1 && h.json.includes(w));
      clean(`the Temporal history of ${w}`, h.json);
    }
    assert.ok(keeperLog.length > 10);
    clean('the keeper log', keeperLog.join('\n'));
  });
});
