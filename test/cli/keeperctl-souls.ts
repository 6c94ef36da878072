// keeperctl against a real keeper: souls registered, given tokens, moved between covens and deleted.
// The rig and the order of the groups: keeperctl.test.ts.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import { tempDir, type TestSoul } from '../runs/keeper';
import type { KeeperctlRig } from './keeperctl-rig';

/** keeperctl: registering souls (agent and ssh) and their tokens. */
export function soulsAddTests(rig: KeeperctlRig): void {
  const { ctl, ok } = rig;
  let souls: TestSoul[];
  // The rig's before() has filled rig.state by now: hooks run in the order they were registered.
  before(() => {
    ({ souls } = rig.state);
  });
  it('souls add, list, get and issue-token; 409 without --force, and --force', async () => {
    const sid = 'cli-new.keeper.test';
    const add = await ctl(['souls', 'add', sid, '--coven', 'web', '--coven', 'db']);
    ok(add);
    assert.match(add.stdout, /bootstrap token \(shown once/);
    assert.match(add.stdout, /kbt_/);

    const list = JSON.parse((await ctl(['souls', 'list', '-o', 'json'])).stdout);
    assert.ok(list.items.some((s: any) => s.sid === sid && s.status === 'pending'));
    const filtered = JSON.parse((await ctl(['souls', 'list', '--coven', 'edge', '-o', 'json', '--all'])).stdout);
    assert.deepEqual(
      filtered.items.map((s: any) => s.sid),
      [souls[0]!.sid],
    );
    const table = (await ctl(['souls', 'list'])).stdout;
    assert.match(table.split('\n')[0]!, /^SID\s+STATUS\s+TRANSPORT\s+COVENS/);
    assert.match(table, new RegExp(`${sid.replace(/\./g, '\\.')}\\s+pending\\s+agent\\s+web,db`));

    const got = yaml.load((await ctl(['souls', 'get', sid, '-o', 'yaml'])).stdout) as any;
    assert.deepEqual(got.covens, ['web', 'db']);

    const conflict = await ctl(['souls', 'issue-token', sid]);
    assert.equal(conflict.code, 5, conflict.stderr);
    assert.match(conflict.stderr, /Conflict: /);
    assert.match(conflict.stderr, new RegExp(`keeperctl souls issue-token ${sid.replace(/\./g, '\\.')} --force`));
    const forced = await ctl(['souls', 'issue-token', sid, '--force', '-o', 'json']);
    ok(forced);
    assert.match(JSON.parse(forced.stdout).bootstrap_token, /^kbt_/);

    const unasked = await ctl(['souls', 'revoke', sid]);
    assert.equal(unasked.code, 2, 'revoking asks first; without a terminal it needs --yes');
    const revoked = await ctl(['souls', 'revoke', sid, '--yes', '-o', 'json']);
    ok(revoked);
    assert.equal(JSON.parse(revoked.stdout).status, 'revoked');
    assert.match((await ctl(['souls', 'get', sid])).stdout, /status:\s+revoked/);
  });

  it('souls add --transport ssh registers without a token; a missing field is exit 2 naming it; souls check of a host it cannot reach is exit 1 with the reason', async () => {
    const sid = 'cli-ssh.keeper.test';
    const dir = tempDir('cli-ssh-');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'a comment', '-f', path.join(dir, 'host')]);
    const keyFile = path.join(dir, 'host.pub');
    const pinned = fs.readFileSync(keyFile, 'utf8').split(' ').slice(0, 2).join(' ');
    try {
      // `souls add` of an SSH host with its key pinned from the file; `more` after.
      const addSsh = (...more: string[]) =>
        ctl([
          'souls',
          'add',
          sid,
          '--coven',
          'build',
          '--transport',
          'ssh',
          '--address',
          '127.0.0.1',
          '--user',
          'root',
          '--host-key',
          `@${keyFile}`,
          ...more,
        ]);
      const missing = await addSsh();
      assert.equal(missing.code, 2, missing.stderr);
      assert.match(missing.stderr, /\/body\/ssh\/credential_ref/);
      const add = await addSsh(
        '--port',
        '9',
        '--credential-ref',
        'secretstore:secret/keeper/services/nowhere#private_key',
      );
      ok(add);
      assert.match(add.stdout, /reached over SSH as root@127\.0\.0\.1:9; no token/);
      assert.doesNotMatch(add.stdout, /kbt_/);
      const got = JSON.parse((await ctl(['souls', 'get', sid, '-o', 'json'])).stdout);
      assert.equal(got.ssh.host_key, pinned, 'the key from the file, pinned without its comment');
      const check = await ctl(['souls', 'check', sid]);
      assert.equal(check.code, 1, check.stderr);
      assert.match(
        check.stderr,
        /cli-ssh\.keeper\.test is not reachable: cannot read the private key at secretstore:secret\/keeper\/services\/nowhere#private_key/,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

/** keeperctl: changing covens and deleting souls. */
export function soulsCovensTests(rig: KeeperctlRig): void {
  const { ctl, ok } = rig;
  it('souls covens replaces the covens and says what changes; souls delete asks, removes; an unknown soul is exit 4', async () => {
    const sid = 'cli-covens.keeper.test';
    ok(await ctl(['souls', 'add', sid, '--coven', 'web']));
    const r = await ctl(['souls', 'covens', sid, 'db', 'cache', '-o', 'json']);
    ok(r);
    const changed = JSON.parse(r.stdout);
    assert.deepEqual(
      [changed.soul.covens, changed.gained_covens, changed.lost_covens, changed.converging, changed.left_incarnations],
      [['db', 'cache'], ['db', 'cache'], ['web'], false, []],
      'a host not onboarded yet has nothing brought to it',
    );
    const back = await ctl(['souls', 'covens', sid, 'web']);
    ok(back);
    assert.match(back.stdout, /^cli-covens\.keeper\.test now carries web \(gained: web; lost: db, cache\)$/m);
    assert.deepEqual(JSON.parse((await ctl(['souls', 'get', sid, '-o', 'json'])).stdout).covens, ['web']);
    const missing = await ctl(['souls', 'covens', 'nobody.keeper.test', 'web']);
    assert.equal(missing.code, 4, missing.stderr);

    assert.equal(
      (await ctl(['souls', 'delete', sid])).code,
      2,
      'deleting asks first; without a terminal it needs --yes',
    );
    const deleted = await ctl(['souls', 'delete', sid, '--yes', '-o', 'json']);
    ok(deleted);
    assert.deepEqual(JSON.parse(deleted.stdout), { sid, deleted: true });
    assert.equal((await ctl(['souls', 'get', sid])).code, 4);
    assert.equal((await ctl(['souls', 'delete', sid, '--yes'])).code, 4);
  });
}
