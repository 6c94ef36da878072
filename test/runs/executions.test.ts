// One-off executions (issue 34) against a real keeper and real souls on the stack: a command on a
// coven (results, exit codes, identical output), check mode changes nothing, a silent host is
// `unknown`, the permission, the per-role module allow-list and the confirmation threshold.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { runKeeperctl } from '../support/keeperctl-process';
import type { TestKeeper } from '../support/keeper';
import { assertProblem, clientFor, operatorToken } from '../api/helpers';
import { startRunKeeper, startSouls, stopRunRig, tempDir, waitFor, type TestSoul } from './keeper';

describe('one-off executions on real souls', function () {
  this.timeout(180_000);
  let k: TestKeeper;
  let api: ReturnType<typeof clientFor>;
  let root: string;
  let souls: TestSoul[];

  before(async () => {
    root = tempDir('executions-');
    k = await startRunKeeper();
    api = clientFor(k);
    souls = await startSouls(k, path.join(root, 'souls'), [['web'], ['web'], ['db']]);
  });
  after(async () => {
    for (const s of souls ?? []) s.run.child.kill('SIGCONT');
    await stopRunRig({ souls, k, root });
  });

  const finished = (id: string) =>
    waitFor(
      `execution ${id}`,
      async () => {
        const r = await api('GET', `/v1/executions/${id}`);
        assert.equal(r.status, 200, r.text);
        return r.body.status === 'done' ? r.body : undefined;
      },
      90_000,
      200,
    );

  it('runs a command on a coven: each host answers with its exit code and output, the other coven untouched', async () => {
    const marker = path.join(root, 'ran-');
    const r = await api('POST', '/v1/executions', {
      body: {
        module: 'core.cmd.run',
        target: { covens: ['web'] },
        params: {
          argv: [`echo same; touch ${marker}$(hostname); [ "$(hostname)" = "${souls[1]!.sid}" ] && exit 3; exit 0`],
          shell: true,
        },
      },
    });
    assert.equal(r.status, 202, r.text);
    assert.deepEqual(r.body.sids, [souls[0]!.sid, souls[1]!.sid].sort());
    // The activity row of the call names the execution it started.
    const rows = (await api('GET', '/v1/activity?target=/v1/executions')).body.items;
    const row = rows.find((a: any) => a.action === 'POST /v1/executions' && a.status === 202);
    assert.ok(row, JSON.stringify(rows));
    assert.equal(row.execution_id, r.body.id);
    assert.equal(row.apply_id, null);
    const e = await finished(r.body.id);
    assert.deepEqual(e.summary, { ok: 0, changed: 1, failed: 1, unknown: 0 });
    const by = Object.fromEntries(e.hosts.map((h: any) => [h.sid, h]));
    assert.equal(by[souls[0]!.sid].status, 'changed');
    assert.match(by[souls[0]!.sid].output, /exit 0[\s\S]*same/);
    assert.equal(by[souls[1]!.sid].status, 'failed');
    assert.match(by[souls[1]!.sid].output, /exited 3/);
    assert.equal(fs.existsSync(marker + souls[2]!.sid), false, 'the db host was not touched');
    assert.equal(fs.existsSync(marker + souls[0]!.sid), true);

    // The event stream: a host event per answer, then the summary.
    const ev = await fetch(`${k.baseUrl}/v1/executions/${r.body.id}/events`, {
      headers: { Authorization: `Bearer ${k.adminToken}` },
    });
    const text = await ev.text();
    assert.equal((text.match(/^event: host$/gm) ?? []).length, 2, text);
    assert.match(text, /event: end\ndata: \{"status":"done","summary":\{"ok":0,"changed":1,"failed":1,"unknown":0\}/);
  });

  it('keeperctl exec --cmd prints a line per host, identical output once with its count, the summary; -o json the execution', async () => {
    const ctl = (args: string[]) =>
      runKeeperctl(args, { PATH: process.env['PATH'], HOME: root, KEEPER_URL: k.baseUrl, KEEPER_TOKEN: k.adminToken });
    const r = await ctl(['exec', '--coven', 'web', '--cmd', '--', 'echo', 'same']);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    for (const s of souls.slice(0, 2))
      assert.match(r.stdout, new RegExp(`^${s.sid.replaceAll('.', '\\.')}  changed  ran echo, exit 0`, 'm'));
    assert.match(r.stdout, /^2 hosts changed \(.*\):\n {4}ran echo, exit 0 \(no guard\)\n {4}stdout:\n {4}same$/m);
    assert.match(r.stdout, /^ok 0, changed 2, failed 0, unknown 0$/m);
    const json = await ctl(['-o', 'json', 'exec', '--sid', souls[0]!.sid, 'core.cmd.run', 'argv=[/bin/false]']);
    assert.equal(json.code, 1, 'a failed host fails the command');
    const e = JSON.parse(json.stdout);
    assert.deepEqual(e.summary, { ok: 0, changed: 0, failed: 1, unknown: 0 });
    assert.match(e.hosts[0].output, /exited 1/);
  });

  it('check mode changes nothing and says what would change', async () => {
    const file = path.join(root, 'dry-run.txt');
    const r = await api('POST', '/v1/executions', {
      body: {
        module: 'core.file.present',
        params: { path: file, content: 'hello\n' },
        target: { sids: [souls[2]!.sid] },
        dry_run: true,
      },
    });
    assert.equal(r.status, 202, r.text);
    const e = await finished(r.body.id);
    assert.equal(e.hosts[0].status, 'changed', JSON.stringify(e.hosts[0]));
    assert.equal(fs.existsSync(file), false, 'nothing was written');
  });

  it('a host that does not answer within the timeout is unknown, never ok', async () => {
    souls[2]!.run.child.kill('SIGSTOP');
    try {
      const r = await api('POST', '/v1/executions', {
        body: { module: 'core.cmd.run', params: { argv: ['true'] }, target: { covens: ['db'] }, timeout: 2 },
      });
      assert.equal(r.status, 202, r.text);
      const e = await finished(r.body.id);
      assert.deepEqual(e.summary, { ok: 0, changed: 0, failed: 0, unknown: 1 });
      assert.equal(e.hosts[0].status, 'unknown');
    } finally {
      souls[2]!.run.child.kill('SIGCONT');
    }
  });

  it('a selection over the threshold needs confirm; unconnected hosts are unknown', async () => {
    for (let i = 0; i < 11; i++)
      assert.equal(
        (
          await api('POST', '/v1/souls', {
            body: { sid: `idle-${i}.exec.example.com`, transport: 'agent', covens: ['idle'] },
          })
        ).status,
        201,
      );
    const body = { module: 'core.cmd.run', params: { argv: ['true'] }, target: { covens: ['idle'] } };
    const refused = await api('POST', '/v1/executions', { body });
    assertProblem(refused, 428, /selects 11 hosts/);
    const r = await api('POST', '/v1/executions', { body: { ...body, confirm: true } });
    assert.equal(r.status, 202, r.text);
    const e = await finished(r.body.id);
    assert.deepEqual(e.summary, { ok: 0, changed: 0, failed: 0, unknown: 11 });
    assert.match(e.hosts[0].output, /not connected/);
  });

  it("refuses with 403 without executions:run, and a module outside the role's allow-list; a bad where names its field", async () => {
    const body = { module: 'core.cmd.run', params: { argv: ['true'] }, target: { covens: ['web'] } };
    const operator = await operatorToken(k, 'exec-operator', 'operator');
    const denied = await clientFor(k, operator)('POST', '/v1/executions', { body });
    assertProblem(denied, 403);
    assert.equal(denied.body.missing_permission, 'executions:run');
    const responder = await operatorToken(k, 'exec-responder', 'responder');
    assertProblem(
      await clientFor(k, responder)('POST', '/v1/executions', { body }),
      403,
      /may not run module core\.cmd\.run/,
    );
    const bad = await api('POST', '/v1/executions', {
      body: { ...body, target: { where: 'soulprint.self.os_release ==' } },
    });
    assertProblem(bad, 400, /target\.where/);
    assertProblem(await api('POST', '/v1/executions', { body: { ...body, params: { argv: [] } } }), 400, /params/);
  });
});
