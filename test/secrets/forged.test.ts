// Issue 28, the review's attack end to end on the real stack: a scenario cuts the run's marker
// apart with CEL (`substring`, `indexOf`) or a template's `replace`/`printf` and builds a reference
// to the keeper's own secret (`secret/keeper/services/../../keeper#signing_key`). soul-lint and
// registration pass it (the secretstore(...) calls are literal and under the declared prefix); the
// render refuses it with SL024 and the task's position, for a run and for a plan, and no soul is
// sent anything. A plan of a legitimate secret, applied under another apply_id, still delivers it:
// the plan's handles are bound to the plan and verified at the applying run's dispatch.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { api, gitRepoFrom, settled, startSouls, tempDir, type TestSoul } from '../runs/keeper';
import { startTestKeeper, type TestKeeper } from '../support/keeper';
import { deleteSecret, putSecret } from '../support/secretstore';
import { createKeeperAppRole, useAppRole, type TestAppRole } from './approle';
import { pgDump } from './leaks';
import { writeCanaryService } from './service';

const FORGED_PATH = 'secret/keeper/services/../../keeper#signing_key@';

function writeForgeService(dir: string, name: string, prefix: string): { cel: number; tmpl: number } {
  const read = `secretstore('${prefix}db', 'password')`;
  const main = [
    'input:',
    '  root: {type: string}',
    'tasks:',
    '  - name: own secret',
    '    module: core.file.present',
    '    params:',
    "      path: \"${input.root + '/' + soulprint.self.fqdn + '/own'}\"",
    '      mode: "0600"',
    `      content: "\${${read}}"`,
    '  - name: forged by cel',
    '    module: core.file.present',
    '    params:',
    "      path: \"${input.root + '/' + soulprint.self.fqdn + '/cel'}\"",
    '      mode: "0600"',
    `      content: "\${${read}.substring(0, ${read}.indexOf(':') + 1) + '${FORGED_PATH}' + ${read}.substring(${read}.indexOf(':') + 1)}"`,
    '  - name: forged by template',
    '    module: core.file.rendered',
    '    params:',
    "      path: \"${input.root + '/' + soulprint.self.fqdn + '/tmpl'}\"",
    '      mode: "0600"',
    '      template: forge.tmpl',
    '      vars:',
    `        db: "\${${read}}"`,
    '',
  ];
  const files: Record<string, string> = {
    'service.yml': `name: ${name}\nstate_schema_version: 1\nsecrets:\n  - ${prefix}\n`,
    'scenario/create/main.yml': main.join('\n'),
    'templates/forge.tmpl': `a={{ .db | replace "«secret:" "«secret:${FORGED_PATH}" }}\nb={{ printf "«secret:%s#%s" "secret/keeper" "signing_key" }}\n`,
  };
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
  return { cel: main.findIndex((l) => l.includes('.substring(')) + 1, tmpl: main.indexOf('      vars:') + 1 };
}

describe('secrets: a reference cannot be made from text (issue 28)', function () {
  this.timeout(300_000);
  const id = randomBytes(4).toString('hex');
  const prefix = `secret/keeper/services/forge-${id}/`;
  let root: string;
  let role: TestAppRole;
  let k: TestKeeper;
  let souls: TestSoul[] = [];
  let lines: { cel: number; tmpl: number };

  const out = () => path.join(root, 'out');
  const ledgerHas = (applyId: string) =>
    souls.some((s) => {
      const dir = path.join(s.dir, 'seed', 'ledger');
      return fs.existsSync(dir) && fs.readdirSync(dir).some((f) => f.startsWith(applyId));
    });
  /** The two refusals: SL024 at each forging task's param, neither naming the keeper's secret as readable. */
  const assertRefused = (errors: any[]) => {
    assert.deepEqual(
      errors.map((e) => [e.rule, e.file, e.line, e.col]),
      [
        ['SL024', 'scenario/create/main.yml', lines.cel, 7],
        ['SL024', 'scenario/create/main.yml', lines.tmpl, 7],
      ],
      JSON.stringify(errors),
    );
    assert.match(
      errors[0].message,
      /^task "forged by cel": core\.file\.present param "content" holds «secret: text that is not a secret this render gave the scenario; a secret reference cannot be made from text$/,
    );
    assert.match(
      errors[1].message,
      /^task "forged by template": core\.file\.rendered param "content" holds «secret: text that is not a secret this render gave the scenario/,
    );
  };

  before(async () => {
    root = tempDir('secrets-forged-');
    role = await createKeeperAppRole(root);
    await putSecret('secret', `keeper/services/forge-${id}/db`, { password: `forge-db-${id}` });
    await putSecret('secret', `keeper/services/forge-${id}/api`, { token: `forge-api-${id}` });
    k = await startTestKeeper({
      mutate: (doc) => {
        useAppRole(doc, role);
      },
    });
    souls = await startSouls(k, path.join(root, 'souls'), [['forge']]);
    const forge = path.join(root, 'forge-src');
    lines = writeForgeService(forge, 'forge', prefix);
    const good = path.join(root, 'good-src');
    writeCanaryService(good, { name: 'good', prefix, readPath: `${prefix}db` });
    for (const [name, dir] of [
      ['forge', forge],
      ['good', good],
    ] as const) {
      // Registration runs soul-lint's checks: the forging scenario passes them (literal reads, declared prefix).
      const r = await api(k, 'POST', '/v1/services', {
        name,
        git: gitRepoFrom(dir, path.join(root, `${name}-repo`), 'v1'),
        ref: 'v1',
      });
      assert.equal(r.status, 201, JSON.stringify(r.body));
    }
  });
  after(async () => {
    await Promise.all(souls.map((s) => s.run.kill()));
    await k?.stop();
    await role?.remove();
    await deleteSecret('secret', `keeper/services/forge-${id}/db`).catch(() => undefined);
    await deleteSecret('secret', `keeper/services/forge-${id}/api`).catch(() => undefined);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('a run building a marker with CEL or a template fails at render with the rule and position; nothing is sent to the soul', async () => {
    const r = await api(k, 'POST', '/v1/incarnations', {
      name: `forge-${id}`,
      service: 'forge',
      covens: ['forge'],
      input: { root: out() },
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const inc = await settled(k, `forge-${id}`, 120_000);
    assert.equal(inc.status, 'error_locked');
    const report = (await api(k, 'GET', `/v1/incarnations/forge-${id}/runs/${r.body.apply_id}`)).body;
    assert.equal(report.status, 'failed');
    assert.deepEqual(report.hosts, [], 'no host was dispatched to');
    assertRefused(report.render_errors);
    assert.equal(fs.existsSync(out()), false, 'no file was written');
    assert.equal(ledgerHas(r.body.apply_id), false, 'the soul was sent no step');
  });

  it('a plan over the same service fails the same way, sending nothing', async () => {
    const p = await api(k, 'POST', `/v1/incarnations/forge-plan-${id}/plans`, {
      operation: 'create',
      service: 'forge',
      covens: ['forge'],
      input: { root: out() },
    });
    assert.equal(p.status, 202, JSON.stringify(p.body));
    const plan = (await api(k, 'GET', `${p.body.plan}?wait=60s`)).body;
    assert.equal(plan.status, 'failed', JSON.stringify(plan));
    assert.deepEqual(plan.hosts, []);
    assertRefused(plan.render_errors);
    assert.equal(fs.existsSync(out()), false);
    assert.equal(ledgerHas(p.body.plan_id), false);
  });

  it('a plan of legitimate secrets, applied under its own run, delivers them; the stored plan holds handles, no path in text', async () => {
    const input = { root: out(), api_token: `secretstore:${prefix}api#token` };
    const p = await api(k, 'POST', `/v1/incarnations/good-${id}/plans`, {
      operation: 'create',
      service: 'good',
      covens: ['forge'],
      input,
    });
    assert.equal(p.status, 202, JSON.stringify(p.body));
    const plan = (await api(k, 'GET', `${p.body.plan}?wait=60s`)).body;
    assert.equal(plan.status, 'ready', JSON.stringify(plan));
    assert.equal(fs.existsSync(out()), false, 'a plan writes nothing');
    const run = await api(k, 'POST', `/v1/incarnations/good-${id}/runs`, { plan_id: plan.plan_id });
    assert.equal(run.status, 202, JSON.stringify(run.body));
    const inc = await settled(k, `good-${id}`, 120_000);
    assert.equal(inc.status, 'ready', JSON.stringify((await api(k, 'GET', run.body.run)).body));
    assert.notEqual(run.body.apply_id, plan.plan_id);
    assert.equal(
      fs.readFileSync(path.join(out(), souls[0]!.sid, 'app.conf'), 'utf8'),
      `[db]\npassword = forge-db-${id}\n[api]\ntoken = forge-api-${id}\n`,
    );
    assert.equal(inc.state.token_ref, `secretstore:${prefix}api#token`);
    const dump = await pgDump(k.db.dsn);
    assert.ok(
      dump.includes('«secret:0»') && dump.includes('«secret:1»') && dump.includes(`${prefix}db`),
      'the stored plan holds handles and its entries',
    );
    assert.ok(!dump.includes(`«secret:${prefix}`), 'no path in step text');
  });
});
