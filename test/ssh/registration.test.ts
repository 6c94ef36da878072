// Registering SSH hosts (issue 15, item 1) and checking them (item 4), against a real keeper and
// real sshd instances: the ssh block validated field by field, no bootstrap token, issue-token
// refused with the reason, every view showing the block without key material, and
// POST /v1/souls/{sid}/check connecting with the pinned key and the FQDN rule.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { uniqueSid } from '../agents/harness';
import { tempDir } from '../runs/keeper';
import { keygen, startSshd, TEST_USER } from './sshd';
import { startSshRig, type SshRig } from './rig';

describe('SSH souls: registration, views and the reachability check', function () {
  this.timeout(120_000);
  let rig: SshRig;

  before(async () => {
    rig = await startSshRig(tempDir('ssh-reg-'));
  });
  after(async () => {
    await rig?.stop();
  });

  const body = (ssh: Record<string, unknown>, sid = uniqueSid('bad')) => ({
    sid,
    transport: 'ssh',
    covens: ['x'],
    ssh,
  });
  const good = () => ({
    address: '127.0.0.1',
    user: TEST_USER,
    host_key: keygen(rig.root, `k-${Math.random().toString(16).slice(2)}`).publicKey,
    credential_ref: rig.keyRef,
  });

  it('answers 400 naming the field for each broken rule, and registers nothing', async () => {
    const cases: [Record<string, unknown> | undefined, string][] = [
      [undefined, '/body/ssh'],
      [{ ...good(), credential_ref: 'secretstore:secret/keeper/x' }, '/body/ssh/credential_ref'],
      [{ ...good(), credential_ref: 'vault:secret/x#k' }, '/body/ssh/credential_ref'],
      [{ ...good(), host_key: 'ssh-ed25519 not-base64!' }, '/body/ssh/host_key'],
      [{ ...good(), host_key: undefined }, '/body/ssh/host_key'],
      [{ ...good(), port: 70000 }, '/body/ssh/port'],
      [{ ...good(), user: 'Root;rm' }, '/body/ssh/user'],
      [{ ...good(), password: 'x' }, '/body/ssh/password'],
    ];
    for (const [ssh, field] of cases) {
      const sid = uniqueSid('bad');
      const r = await rig.api(
        'POST',
        '/v1/souls',
        ssh === undefined ? { sid, transport: 'ssh', covens: [] } : body(ssh, sid),
      );
      assert.equal(r.status, 400, `${field}: ${JSON.stringify(r.body)}`);
      assert.ok(
        r.body.errors.some((e: { path: string }) => e.path === field),
        `${field} named: ${JSON.stringify(r.body.errors)}`,
      );
      assert.equal((await rig.api('GET', `/v1/souls/${sid}`)).status, 404, 'nothing registered');
    }
    const agent = await rig.api('POST', '/v1/souls', {
      sid: uniqueSid('agent'),
      transport: 'agent',
      covens: [],
      ssh: good(),
    });
    assert.equal(agent.status, 400);
    assert.equal(agent.body.errors[0].path, '/body/ssh');
  });

  it('registers without a bootstrap token, shows the block without key material, and refuses issue-token with the reason', async () => {
    const { sid, sshd } = await rig.host({ covens: ['web'] });
    const soul = (await rig.api('GET', `/v1/souls/${sid}`)).body;
    assert.equal(soul.transport, 'ssh');
    assert.equal(soul.status, 'pending');
    assert.equal(soul.bootstrap_token_expires_at, null);
    assert.deepEqual(soul.ssh, {
      address: '127.0.0.1',
      port: sshd.port,
      user: TEST_USER,
      host_key: sshd.hostKey.publicKey.split(' ').slice(0, 2).join(' '),
      credential_ref: rig.keyRef,
      sudo: false,
      trust_on_first_use: false,
    });
    assert.equal(soul.last_contact_at, null);
    for (const force of [false, true]) {
      const t = await rig.api('POST', `/v1/souls/${sid}/issue-token`, { force });
      assert.equal(t.status, 409, JSON.stringify(t.body));
      assert.match(t.body.detail, /transport ssh: it has no bootstrap token/);
    }
    const doc = (await (await fetch(`${rig.k.baseUrl}/openapi.json`)).json()) as any;
    assert.ok(doc.components.schemas.SoulSsh, 'the OpenAPI document describes the ssh block');
    assert.ok(doc.paths['/v1/souls/{sid}/check'].post, 'and the check route');
  });

  it('checks a host: pinned key and FQDN verified, facts recorded; a changed key and a wrong host are reported, not trusted', async () => {
    const { sid } = await rig.host({ covens: ['web'] });
    const ok = await rig.api('POST', `/v1/souls/${sid}/check`);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.reachable, true, ok.body.reason);
    assert.equal(ok.body.facts.fqdn, sid);
    const after = (await rig.api('GET', `/v1/souls/${sid}`)).body;
    assert.equal(after.soulprint.fqdn, sid);
    assert.ok(after.last_contact_at);
    assert.equal(after.last_error, null);
    assert.equal(after.status, 'disconnected', 'known and reachable on demand; no stream is held');

    const other = keygen(rig.root, 'other-host-key');
    const { sid: changed } = await rig.host({ covens: ['web'], hostKey: other.publicKey });
    const bad = await rig.api('POST', `/v1/souls/${changed}/check`);
    assert.equal(bad.body.reachable, false);
    assert.match(bad.body.reason, /^host key changed/);
    assert.equal(bad.body.facts, null);
    assert.match((await rig.api('GET', `/v1/souls/${changed}`)).body.last_error, /host key changed/);

    const { sid: wrong } = await rig.host({ covens: ['web'], hostname: uniqueSid('impostor') });
    const w = await rig.api('POST', `/v1/souls/${wrong}/check`);
    assert.equal(w.body.reachable, false);
    assert.match(w.body.reason, /^wrong host: .* says its FQDN is "impostor-/);

    const agentSid = uniqueSid('agent');
    assert.equal((await rig.api('POST', '/v1/souls', { sid: agentSid, transport: 'agent', covens: [] })).status, 201);
    assert.equal((await rig.api('POST', `/v1/souls/${agentSid}/check`)).status, 409);
  });

  it('trust on first use: no pinned key at registration, the first key seen is recorded and then pinned', async () => {
    const sid = uniqueSid('tofu');
    const d = await startSshd(rig.root, sid, rig.client.publicKey);
    try {
      const r = await rig.api('POST', '/v1/souls', {
        sid,
        transport: 'ssh',
        covens: [],
        ssh: {
          address: '127.0.0.1',
          port: d.port,
          user: TEST_USER,
          credential_ref: rig.keyRef,
          trust_on_first_use: true,
        },
      });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.equal(r.body.ssh.host_key, null);
      assert.equal(r.body.ssh.trust_on_first_use, true);
      assert.equal((await rig.api('POST', `/v1/souls/${sid}/check`)).body.reachable, true);
      const soul = (await rig.api('GET', `/v1/souls/${sid}`)).body;
      assert.equal(
        soul.ssh.host_key,
        d.hostKey.publicKey.split(' ').slice(0, 2).join(' '),
        'the key seen is now pinned',
      );
      assert.equal(soul.ssh.trust_on_first_use, true, 'and the flag stays shown');
    } finally {
      await d.stop();
    }
  });

  it('trust on first use pins the key at the first authenticated contact, even one that fails later; a different key is then refused', async () => {
    const sid = uniqueSid('tofu-fail');
    // Authentication succeeds, then the contact fails: the host answers under another name.
    const d = await startSshd(rig.root, uniqueSid('elsewhere'), rig.client.publicKey);
    try {
      const r = await rig.api('POST', '/v1/souls', {
        sid,
        transport: 'ssh',
        covens: [],
        ssh: {
          address: '127.0.0.1',
          port: d.port,
          user: TEST_USER,
          credential_ref: rig.keyRef,
          trust_on_first_use: true,
        },
      });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      const first = (await rig.api('POST', `/v1/souls/${sid}/check`)).body;
      assert.equal(first.reachable, false);
      assert.match(first.reason, /^wrong host: /);
      const seen = d.hostKey.publicKey.split(' ').slice(0, 2).join(' ');
      assert.equal(
        (await rig.api('GET', `/v1/souls/${sid}`)).body.ssh.host_key,
        seen,
        'the key of the failed contact is pinned',
      );

      // The same address now presents another key (sshd rereads its host key on SIGHUP).
      const rotated = keygen(rig.root, `rotated-${Math.random().toString(16).slice(2)}`);
      fs.writeFileSync(path.join(d.dir, 'host_ed25519'), rotated.privateKey, { mode: 0o600 });
      fs.writeFileSync(path.join(d.dir, 'host_ed25519.pub'), `${rotated.publicKey}\n`);
      d.child.kill('SIGHUP');
      let second: any;
      for (const until = Date.now() + 10_000; ; ) {
        second = (await rig.api('POST', `/v1/souls/${sid}/check`)).body;
        if (/^host key changed/.test(second.reason ?? '') || Date.now() > until) break;
        await new Promise((res) => setTimeout(res, 200)); // sshd is restarting: connection refused meanwhile
      }
      assert.equal(second.reachable, false);
      assert.match(second.reason, /^host key changed/);
      assert.equal((await rig.api('GET', `/v1/souls/${sid}`)).body.ssh.host_key, seen, 'the pin stays');
    } finally {
      await d.stop();
    }
  });

  it('a revoked SSH soul is no longer reached', async () => {
    const { sid } = await rig.host({ covens: ['web'] });
    assert.equal((await rig.api('POST', `/v1/souls/${sid}/revoke`)).status, 200);
    const r = await rig.api('POST', `/v1/souls/${sid}/check`);
    assert.equal(r.body.reachable, false);
    assert.match(r.body.reason, /revoked/);
  });

  it('keeps the private key out of every answer and log line (canary)', () => {
    const body = rig.client.privateKey.split('\n').filter((l) => l && !l.startsWith('-----'));
    const all = [...rig.answers, ...rig.logs].join('\n');
    for (const line of body) assert.ok(!all.includes(line), 'a line of the private key leaked');
  });
});
