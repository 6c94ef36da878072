// Push mode over SSH end to end (issue 15, "Checked by"): one incarnation whose coven holds three
// SSH hosts (real sshd, each in its own UTS namespace with its SID as host name) and two agent souls
// is applied in one run with one report, with the real scenario engine and a service from git; the
// same run again changes nothing. Then the ways an SSH host can fail (a changed host key, a host
// answering under another name, a key the host does not accept, a stopped sshd) each leave that
// host unknown with its reason, nothing run there, and the incarnation error_locked with nothing
// committed. Last, the canary: the private key is in no log line, database row, Temporal history
// or API answer.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { repoRoot } from '../support/repo';
import { putSecret, deleteSecret } from '../support/secretstore';
import { connectStackTemporal } from '../support/temporal-client';
import { gitRepoFrom, settled, startSouls, tempDir, type TestSoul } from '../runs/keeper';
import { keygen } from './sshd';
import { startSshRig, type SshRig } from './rig';

describe('push mode over SSH: SSH hosts and agent souls in one run', function () {
  this.timeout(300_000);
  let rig: SshRig;
  let agents: TestSoul[] = [];
  let sshSids: string[] = [];
  const applyIds: string[] = [];
  const out = () => path.join(rig.root, 'out');

  before(async () => {
    rig = await startSshRig(tempDir('ssh-push-'));
    const url = gitRepoFrom(
      path.join(repoRoot(), 'test', 'fixtures', 'services', 'fleet'),
      path.join(rig.root, 'fleet.git'),
      'v1',
    );
    assert.equal((await rig.api('POST', '/v1/services', { name: 'fleet', git: url, ref: 'v1' })).status, 201);
    agents = await startSouls(rig.k, path.join(rig.root, 'souls'), [['mixed'], ['mixed']]);
    sshSids = (await Promise.all([1, 2, 3].map(() => rig.host({ covens: ['mixed'] })))).map((h) => h.sid);
    // The first render of an SSH host needs its facts: a check reads them (docs/ssh.md).
    for (const sid of sshSids) assert.equal((await rig.api('POST', `/v1/souls/${sid}/check`)).body.reachable, true);
  });
  after(async () => {
    await Promise.all(agents.map((s) => s.run.kill()));
    await rig?.stop();
  });

  const report = async (name: string, applyId: string) =>
    (await rig.api('GET', `/v1/incarnations/${name}/runs/${applyId}`)).body;

  it('applies one run to three SSH hosts and two agents: ready, files and modes right everywhere; the second run changes nothing', async () => {
    const input = { root: out(), message: 'pushed' };
    const r = await rig.api('POST', '/v1/incarnations', { name: 'mixed', service: 'fleet', covens: ['mixed'], input });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    applyIds.push(r.body.apply_id);
    const inc = await settled(rig.k, 'mixed', 120_000);
    const first = await report('mixed', r.body.apply_id);
    assert.equal(inc.status, 'ready', JSON.stringify(first.hosts, null, 1));
    assert.equal(first.hosts.length, 5);
    for (const sid of [...sshSids, ...agents.map((a) => a.sid)]) {
      const host = first.hosts.find((h: any) => h.sid === sid);
      assert.deepEqual(
        host.steps.map((s: any) => s.status),
        ['ok', 'changed', 'changed'],
        `${sid}: ${JSON.stringify(host)}`,
      );
      const dir = path.join(out(), sid);
      assert.equal(fs.statSync(path.join(dir, 'private.conf')).mode & 0o777, 0o600);
      assert.equal(fs.readFileSync(path.join(dir, 'private.conf'), 'utf8'), `token for ${sid}\n`);
      assert.equal(fs.statSync(path.join(dir, 'app.conf')).mode & 0o777, 0o644);
      assert.equal(fs.readFileSync(path.join(dir, 'app.conf'), 'utf8'), `message = pushed\nhost = ${sid}\n`);
    }
    // The ledger of an SSH host lives on the host, as for an agent.
    for (const sid of sshSids)
      assert.ok(fs.existsSync(path.join(rig.root, 'ledgers', sid, 'ledger')), `ledger of ${sid}`);

    const again = await rig.api('POST', '/v1/incarnations/mixed/runs', { operation: 'create', input });
    assert.equal(again.status, 202, JSON.stringify(again.body));
    applyIds.push(again.body.apply_id);
    assert.equal((await settled(rig.k, 'mixed', 120_000)).status, 'ready');
    const second = await report('mixed', again.body.apply_id);
    assert.equal(second.summary.changed, false, JSON.stringify(second.hosts));
    for (const h of second.hosts)
      assert.deepEqual(
        h.steps.map((s: any) => s.status),
        ['ok', 'ok', 'ok'],
        h.sid,
      );
    for (const sid of sshSids)
      assert.ok((await rig.api('GET', `/v1/souls/${sid}`)).body.last_contact_at, 'last contact recorded');
  });

  it('a changed host key, a wrong host, a refused key and a stopped sshd: each host unknown with its reason, nothing run there, error_locked, nothing committed', async () => {
    const good = await rig.host({ covens: ['faulty'] });
    const changed = await rig.host({ covens: ['faulty'] });
    const wrong = await rig.host({ covens: ['faulty'] });
    const stopped = await rig.host({ covens: ['faulty'] });
    const stranger = keygen(rig.root, 'stranger');
    const strangerSecret = `keeper/services/ssh-test/stranger-${path.basename(rig.root)}`;
    const strangerRef = `${await putSecret('secret', strangerSecret, { private_key: stranger.privateKey })}#private_key`;
    const refused = await rig.host({ covens: ['faulty'] });
    try {
      // Facts first, while every host is still itself.
      for (const h of [good, changed, wrong, stopped, refused])
        assert.equal((await rig.api('POST', `/v1/souls/${h.sid}/check`)).body.reachable, true, h.sid);
      // Then each goes wrong in its own way: the host presents a key other than the pinned one; the
      // address now leads to another machine (the good host's sshd, which is not this SID); the
      // credential is a key the host does not accept; sshd stops.
      const db = rig.k.keeper.runtime.db;
      const other = keygen(rig.root, 'rotated-host-key').publicKey.split(' ').slice(0, 2).join(' ');
      await db.raw(`update souls set ssh = jsonb_set(ssh, '{host_key}', to_jsonb(?::text)) where sid = ?`, [
        other,
        changed.sid,
      ]);
      await db.raw(
        `update souls set ssh = jsonb_set(jsonb_set(ssh, '{port}', to_jsonb(?::int)), '{host_key}', to_jsonb(?::text)) where sid = ?`,
        [good.sshd.port, good.sshd.hostKey.publicKey.split(' ').slice(0, 2).join(' '), wrong.sid],
      );
      await db.raw(`update souls set ssh = jsonb_set(ssh, '{credential_ref}', to_jsonb(?::text)) where sid = ?`, [
        strangerRef,
        refused.sid,
      ]);
      await stopped.sshd.stop();

      const r = await rig.api('POST', '/v1/incarnations', {
        name: 'faulty',
        service: 'fleet',
        covens: ['faulty'],
        input: { root: out(), message: 'faulty' },
      });
      assert.equal(r.status, 202, JSON.stringify(r.body));
      applyIds.push(r.body.apply_id);
      const inc = await settled(rig.k, 'faulty', 120_000);
      const rep = await report('faulty', r.body.apply_id);
      assert.equal(inc.status, 'error_locked', JSON.stringify(rep.hosts, null, 1));
      assert.deepEqual(inc.state ?? {}, {}, 'nothing committed: the state is as before the run');
      const host = (sid: string) => rep.hosts.find((h: any) => h.sid === sid);
      const expect: [string, RegExp, RegExp][] = [
        [
          changed.sid,
          /^host key changed: .* presented SHA256:.*, the registration pins SHA256:.*; nothing was run on this host$/,
          /^host key changed/,
        ],
        [
          wrong.sid,
          new RegExp(
            `^wrong host: 127\\.0\\.0\\.1:${good.sshd.port} says its FQDN is "${good.sid.replace(/\./g, '\\.')}", not ${wrong.sid.replace(/\./g, '\\.')}`,
          ),
          /^wrong host/,
        ],
        [
          refused.sid,
          /^authentication failed for user soul-push-test .*credential_ref is not accepted/,
          /^authentication failed/,
        ],
        [stopped.sid, /^connection refused at 127\.0\.0\.1:\d+ \(is sshd running\?\)/, /^connection refused/],
      ];
      for (const [sid, reason, lastError] of expect) {
        assert.equal(host(sid).status, 'unknown', JSON.stringify(host(sid)));
        assert.match(host(sid).reason, reason);
        assert.equal(
          host(sid).steps.filter((s: any) => s.status !== 'pending' && s.status !== 'skipped').length,
          0,
          `no step ran on ${sid}`,
        );
        assert.ok(!fs.existsSync(path.join(out(), sid)), `nothing written for ${sid}`);
        assert.match(
          (await rig.api('GET', `/v1/souls/${sid}`)).body.last_error,
          lastError,
          'the registry shows the last error',
        );
      }
      assert.equal(host(good.sid).status, 'changed', 'the good host was applied (its changes are not committed)');
    } finally {
      await deleteSecret('secret', strangerSecret).catch(() => undefined);
    }
  });

  it('keeps the private key out of every log line, database row, Temporal history and API answer (canary)', async () => {
    const lines = rig.client.privateKey.split('\n').filter((l) => l.length > 20 && !l.startsWith('-----'));
    assert.ok(lines.length >= 3);
    const leaked = (text: string) => lines.some((l) => text.includes(l));
    assert.ok(!leaked(rig.logs.join('\n')), 'logs');
    assert.ok(!leaked(rig.answers.join('\n')), 'API answers');
    const db = rig.k.keeper.runtime.db;
    const tables = (
      await db.raw(
        `select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`,
      )
    ).rows as { table_name: string }[];
    for (const { table_name } of tables) {
      const rows = (await db.raw(`select t::text as row from "${table_name}" t`)).rows as { row: string }[];
      assert.ok(!leaked(rows.map((x) => x.row).join('\n')), `table ${table_name}`);
    }
    const connection = await connectStackTemporal();
    try {
      const client = new Client({ connection, namespace: 'default' });
      for (const id of applyIds) {
        const history = JSON.stringify(await client.workflow.getHandle(id).fetchHistory());
        assert.ok(history.length > 1000);
        assert.ok(!leaked(history), `history of ${id}`);
      }
    } finally {
      await connection.close();
    }
  });
});
