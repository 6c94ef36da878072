// Secrets end to end on the real stack (issue 12): a scenario reading secretstore(...) and a
// `secret: true` input, with unique canary values, renders them into a 0600 file on two real souls
// through the real scenario engine. Afterwards the canaries are in those files and in the secrets
// store, and nowhere else: keeper and soul logs, a pg_dump of the keeper's database, every cache
// key, every Temporal history of the run, the souls' ledgers and files, and every REST and MCP
// answer about the run, its history and the incarnation, and the /ui pages with every answer they
// fetched, as a viewer and as an admin.
// Also the policy: a read outside the service's declared prefixes fails at render (path and rule,
// nothing dispatched) and soul-lint reports it offline.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createLogger } from '../../common/logger';
import { operatorToken } from '../api/helpers';
import { callTool, connectMcp } from '../mcp/client';
import { gitRepoFrom, settled, startSouls, tempDir, type TestSoul } from '../runs/keeper';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { freePort } from '../support/ports';
import { repoRoot } from '../support/repo';
import { deleteSecret, putSecret, secretStoreCall } from '../support/secretstore';
import { createKeeperAppRole, useAppRole, type TestAppRole } from './approle';
import { filesUnder, pgDump, redisDump, temporalHistories } from './leaks';
import { launch, newPage, signIn } from '../ui/browser';
import { SECRETSTORE_LINE, writeCanaryService } from './service';

const run = promisify(execFile);

describe('secrets: canaries reach the target files and the store, nothing else', function () {
  this.timeout(300_000);
  const id = randomBytes(4).toString('hex');
  const CANARY_DB = `canary-db-${randomBytes(12).toString('hex')}`;
  const CANARY_INPUT = `canary-input-${randomBytes(12).toString('hex')}`;
  const canaries = [CANARY_DB, CANARY_INPUT];
  const prefix = `secret/keeper/services/canary-${id}/`;
  const keeperLog: string[] = [];
  let root: string;
  let role: TestAppRole;
  let k: TestKeeper;
  let souls: TestSoul[] = [];
  let mcpAddr: string;
  let viewer: string;
  let applyId: string;
  const inc = `canary-${id}`;

  const call = async (token: string, p: string) => {
    const res = await fetch(`${k.baseUrl}${p}`, {
      headers: { Authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(20_000),
    });
    return { status: res.status, text: await res.text() };
  };
  const noCanary = (where: string, text: string) => {
    for (const c of canaries) assert.ok(!text.includes(c), `a canary leaked into ${where}`);
  };

  before(async () => {
    root = tempDir('secrets-canary-');
    role = await createKeeperAppRole(root);
    mcpAddr = `127.0.0.1:${await freePort()}`;
    await putSecret('secret', `keeper/services/canary-${id}/db`, { password: CANARY_DB });
    k = await startTestKeeper({
      mutate: (doc) => {
        useAppRole(doc, role);
        doc.listen.mcp = { addr: mcpAddr };
        doc.logging.level = 'debug';
      },
      log: createLogger({ level: 'debug', write: (l) => keeperLog.push(l) }),
    });
    souls = await startSouls(k, path.join(root, 'souls'), [['canary'], ['canary']]);
    const src = path.join(root, 'src');
    writeCanaryService(src, { name: 'canary', prefix, readPath: `${prefix}db` });
    const git = gitRepoFrom(src, path.join(root, 'repo'), 'v1');
    const reg = await fetch(`${k.baseUrl}/v1/services`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${k.adminToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'canary', git, ref: 'v1' }),
    });
    assert.equal(reg.status, 201, await reg.text());
    viewer = await operatorToken(k, `viewer-${id}`, 'viewer');
  });
  after(async () => {
    await Promise.all(souls.map((s) => s.run.kill()));
    await k?.stop();
    await role?.remove();
    await deleteSecret('secret', `keeper/services/canary-${id}/db`).catch(() => undefined);
    await secretStoreCall(
      'DELETE',
      `secret/metadata/keeper/services/incarnations/${inc}/${applyId}/runs/${applyId}`,
    ).catch(() => undefined);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('renders both canaries into a 0600 file on two real souls; the run, state and store keep references', async () => {
    const res = await fetch(`${k.baseUrl}/v1/incarnations`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${k.adminToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        name: inc,
        service: 'canary',
        covens: ['canary'],
        input: { root: path.join(root, 'out'), api_token: CANARY_INPUT },
      }),
    });
    const accepted = (await res.json()) as { apply_id: string };
    assert.equal(res.status, 202, JSON.stringify(accepted));
    applyId = accepted.apply_id;
    const done = await settled(k, inc, 120_000);
    const report = JSON.parse((await call(k.adminToken, `/v1/incarnations/${inc}/runs/${applyId}`)).text);
    assert.equal(done.status, 'ready', JSON.stringify(report));
    for (const s of souls) {
      const file = path.join(root, 'out', s.sid, 'app.conf');
      assert.equal(fs.readFileSync(file, 'utf8'), `[db]\npassword = ${CANARY_DB}\n[api]\ntoken = ${CANARY_INPUT}\n`);
      assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    }
    // The file is reported changed, its content nowhere in the report.
    assert.deepEqual(
      report.hosts.map((h: any) => [h.status, h.steps[0].status, h.steps[0].changed]),
      [
        ['changed', 'changed', true],
        ['changed', 'changed', true],
      ],
    );
    const storedAt = `secret/keeper/services/incarnations/${inc}/${applyId}/runs/${applyId}`;
    assert.equal(report.input.api_token, `secretstore:${storedAt}#api_token`);
    assert.equal(done.state.token_ref, `secretstore:${storedAt}#api_token`);
    const stored = await secretStoreCall(
      'GET',
      `secret/data/keeper/services/incarnations/${inc}/${applyId}/runs/${applyId}`,
    );
    assert.equal(stored.data.data.api_token, CANARY_INPUT);
  });

  it('leaves the canaries in no log, row, cache key, history, ledger or answer', async () => {
    assert.ok(applyId, 'the first test ran');
    // Logs: the keeper's at debug level, and each soul's.
    assert.ok(keeperLog.length > 10);
    noCanary('the keeper log', keeperLog.join('\n'));
    for (const s of souls) noCanary(`the log of ${s.sid}`, s.run.log.stderr);
    // The keeper's whole database; the stored plan holds the handles and their signed entries (the dump is the right one).
    const dump = await pgDump(k.db.dsn);
    assert.ok(dump.includes('«secret:0»') && dump.includes(`"path": "${prefix}db"`) && dump.includes(applyId));
    noCanary('pg_dump', dump);
    noCanary('the cache', await redisDump());
    const histories = await temporalHistories(applyId);
    assert.ok(histories.count >= 1 && histories.json.includes(applyId));
    noCanary('the Temporal histories', histories.json);
    // Each soul's directory: ledger, identity, config.
    for (const s of souls) {
      const files = filesUnder(s.dir);
      assert.ok(
        files.some((f) => f.text.includes(applyId)),
        `no ledger entry of the run under ${s.dir}`,
      );
      for (const f of files) noCanary(f.file, f.text);
    }
    // REST, as viewer and admin (/ui serves static files only and shows these same answers; the
    // run's event stream is what /ui follows a run with, and closes after the run's end).
    const paths = [
      '/v1/incarnations',
      `/v1/incarnations/${inc}`,
      `/v1/incarnations/${inc}/history`,
      `/v1/incarnations/${inc}/runs/${applyId}`,
      `/v1/incarnations/${inc}/runs/${applyId}/events`,
      '/v1/services',
    ];
    for (const [who, token] of [
      ['admin', k.adminToken],
      ['viewer', viewer],
    ] as const) {
      for (const p of paths) {
        const a = await call(token, p);
        assert.equal(a.status, 200, `${who} GET ${p}: ${a.text}`);
        noCanary(`${who} GET ${p}`, a.text);
      }
      // MCP, the same questions.
      const client: Client = await connectMcp(mcpAddr, token);
      try {
        for (const [tool, args] of [
          ['list-incarnations', {}],
          ['get-incarnation', { name: inc }],
          ['get-incarnation-history', { name: inc }],
          ['get-run', { name: inc, apply_id: applyId }],
        ] as const) {
          const r = await callTool(client, tool, args);
          assert.equal(r.isError, false, `${who} ${tool}: ${r.text}`);
          assert.ok(r.text.includes(inc));
          noCanary(`${who} MCP ${tool}`, r.text + JSON.stringify(r.data));
        }
      } finally {
        await client.close();
      }
    }
    // /ui, as each operator sees it: the pages and every answer they fetched.
    const browser = await launch();
    try {
      for (const [who, token] of [
        ['admin', k.adminToken],
        ['viewer', viewer],
      ] as const) {
        const { context, page } = await newPage(browser, k.baseUrl);
        const fetched: Promise<string>[] = [];
        page.on('response', (r) => {
          if (r.url().includes('/v1/')) fetched.push(r.text().catch(() => ''));
        });
        await signIn(page, token);
        for (const p of ['/ui/incarnations', `/ui/incarnations/${inc}`]) {
          await page.goto(p);
          await page.getByText(inc).first().waitFor({ timeout: 20_000 });
          await page.waitForLoadState('networkidle');
          // Open every collapsed host and step, so their content is rendered too.
          for (const d of await page.locator('details:not([open]) > summary').all())
            await d.click().catch(() => undefined);
          noCanary(`${who} ${p}`, await page.content());
        }
        const bodies = await Promise.all(fetched);
        assert.ok(
          bodies.some((b) => b.includes(applyId)),
          `${who}: /ui fetched nothing about the run`,
        );
        noCanary(`${who} /ui fetches`, bodies.join('\n'));
        await context.close();
      }
    } finally {
      await browser.close();
    }
    // The canaries are where they belong: the store and the two files.
    for (const s of souls)
      assert.ok(fs.readFileSync(path.join(root, 'out', s.sid, 'app.conf'), 'utf8').includes(CANARY_DB));
  });

  it('a read outside the declared prefixes is refused at registration with the path and the rule, nothing run; soul-lint reports it', async () => {
    const src = path.join(root, 'bad-src');
    const outside = `secret/keeper/services/other-${id}/db`;
    writeCanaryService(src, { name: 'canary-bad', prefix, readPath: outside });
    const lint = await run(process.execPath, [path.join(repoRoot(), 'bin', 'soul-lint'), src]).then(
      () => ({ code: 0, stdout: '' }),
      (e) => ({ code: e.code as number, stdout: String(e.stdout) }),
    );
    assert.equal(lint.code, 1);
    assert.match(
      lint.stdout,
      new RegExp(
        `scenario/create/main\\.yml:${SECRETSTORE_LINE}:\\d+.*SL023.*${outside.replace(/\//g, '\\/')} is outside the prefixes the service declares`,
      ),
    );
    const git = gitRepoFrom(src, path.join(root, 'bad-repo'), 'v1');
    const headers = { Authorization: `Bearer ${k.adminToken}`, 'Content-Type': 'application/json' };
    // The keeper runs the same checks at registration: refused (422) with the file:line and the rule, nothing stored, nothing run.
    const reg = await fetch(`${k.baseUrl}/v1/services`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'canary-bad', git, ref: 'v1' }),
    });
    const problem = (await reg.json()) as { detail: string };
    assert.equal(reg.status, 422, JSON.stringify(problem));
    assert.match(
      problem.detail,
      new RegExp(
        `scenario/create/main\\.yml:${SECRETSTORE_LINE}:\\d+ SL023: .*${outside.replace(/\//g, '\\/')} is outside the prefixes the service declares`,
      ),
    );
    assert.equal((await call(k.adminToken, '/v1/services/canary-bad')).status, 404);
    assert.equal(fs.existsSync(path.join(root, 'bad-out')), false);
  });
});
