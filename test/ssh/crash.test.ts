// The keeper killed with SIGKILL while it dispatches to SSH hosts, then started again: the run
// finishes, and every step took effect once, because the ledger lives on the host and the retried
// dispatch sends the same (apply_id, host, step) keys to a new `soul apply`, which answers the ones
// already recorded from it. The keeper runs as its own process so the kill is real; its SSH
// connections die with it. Steps are slow (each confirmed by a second send 2 s later, `until:`), so
// the kill lands mid-dispatch.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { initTestKeeper, cleanupKeeperFiles, type InitializedKeeper } from '../support/keeper';
import { repoRoot } from '../support/repo';
import { deleteSecret, putSecret } from '../support/secretstore';
import { api, uniqueSid } from '../agents/harness';
import { gitRepoFrom, settled, spawnKeeper, tempDir, waitFor, type KeeperProcess } from '../runs/keeper';
import { keygen, startSshd, type TestSshd, TEST_USER } from './sshd';

const STEPS = 4;

function writeService(dir: string): void {
  fs.mkdirSync(path.join(dir, 'scenario', 'create'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'service.yml'), 'name: slowpush\nstate_schema_version: 1\n');
  const tasks = Array.from(
    { length: STEPS },
    (_, i) => `  - name: file ${i}
    module: core.file.present
    params:
      path: "\${input.root}/\${soulprint.self.fqdn}/f${i}"
      content: "f${i} on \${soulprint.self.fqdn}\\n"
    until: "result.changed == false"
    retries: 3
    delay: 2
`,
  ).join('');
  fs.writeFileSync(
    path.join(dir, 'scenario', 'create', 'main.yml'),
    `description: Slow files over SSH.
input:
  root:
    type: string
state_changes:
  sets:
    root: "\${input.root}"
tasks:
${tasks}`,
  );
}

interface LedgerLine {
  apply_id: string;
  index: number;
  changed: boolean;
}

describe('push mode over SSH survives a keeper killed mid-dispatch (SIGKILL, restart, exactly once)', function () {
  this.timeout(300_000);
  let root: string;
  let k: InitializedKeeper;
  let keeper: KeeperProcess | undefined;
  const sshds: TestSshd[] = [];
  const sids: string[] = [];
  let secretName: string;

  const ledgerLines = (sid: string, applyId: string): LedgerLine[] => {
    const dir = path.join(root, 'ledgers', sid, 'ledger');
    if (!fs.existsSync(dir)) return [];
    return fs
      .readdirSync(dir)
      .filter((f) => f === `${applyId}.jsonl` || f.startsWith(`${applyId}:u`))
      .flatMap((f) =>
        fs
          .readFileSync(path.join(dir, f), 'utf8')
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as LedgerLine),
      );
  };

  before(async () => {
    root = tempDir('ssh-crash-');
    const client = keygen(root, 'client');
    secretName = `keeper/services/ssh-test/crash-${randomBytes(4).toString('hex')}`;
    const keyRef = `${await putSecret('secret', secretName, { private_key: client.privateKey })}#private_key`;
    k = await initTestKeeper({
      mutate: (doc) => {
        doc.ssh = {
          soul_command: `${process.execPath} ${path.join(repoRoot(), 'bin', 'soul')}`,
          state_dir: path.join(root, 'ledgers'),
          connect_timeout: '5s',
        };
      },
    });
    keeper = await spawnKeeper(k);
    for (let i = 0; i < 2; i++) {
      const sid = uniqueSid(`crash${i}`);
      const sshd = await startSshd(root, sid, client.publicKey);
      sshds.push(sshd);
      sids.push(sid);
      const r = await api(k, 'POST', '/v1/souls', {
        sid,
        transport: 'ssh',
        covens: ['slow'],
        ssh: {
          address: '127.0.0.1',
          port: sshd.port,
          user: TEST_USER,
          host_key: sshd.hostKey.publicKey,
          credential_ref: keyRef,
        },
      });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.equal((await api(k, 'POST', `/v1/souls/${sid}/check`)).body.reachable, true);
    }
    const src = path.join(root, 'slowpush-src');
    writeService(src);
    const r = await api(k, 'POST', '/v1/services', {
      name: 'slowpush',
      git: gitRepoFrom(src, path.join(root, 'slowpush.git'), 'v1'),
      ref: 'v1',
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  });
  after(async () => {
    if (keeper && keeper.child.exitCode === null && keeper.child.signalCode === null) {
      keeper.child.kill('SIGTERM');
      await keeper.exited;
    }
    await Promise.all(sshds.map((s) => s.stop()));
    if (k) await cleanupKeeperFiles(k);
    await deleteSecret('secret', secretName).catch(() => undefined);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("finishes ready after kill -9 and restart; each step is in each host's ledger once and changed its file once", async () => {
    const out = path.join(root, 'out');
    const r = await api(k, 'POST', '/v1/incarnations', {
      name: 'slow',
      service: 'slowpush',
      covens: ['slow'],
      input: { root: out },
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const applyId: string = r.body.apply_id;
    // Mid-dispatch: every host has at least one step done (both sends in its ledger) and not all.
    const done = (sid: string) => {
      const keys = new Set(ledgerLines(sid, applyId).map((l) => `${l.apply_id}#${l.index}`));
      return Array.from({ length: STEPS }, (_, i) => i).filter(
        (i) => keys.has(`${applyId}#${i}`) && keys.has(`${applyId}:u2#${i}`),
      );
    };
    await waitFor(
      'every SSH host half way',
      async () => sids.every((sid) => done(sid).length >= 1 && done(sid).length < STEPS - 1),
      60_000,
      100,
    ).catch((err: Error) => {
      err.message += `\n--- keeper log ---\n${keeper!.log.stderr.slice(-3000)}`;
      throw err;
    });
    keeper!.child.kill('SIGKILL');
    await keeper!.exited;
    const doneAtKill = new Map(sids.map((sid) => [sid, done(sid)]));

    keeper = await spawnKeeper(k);
    const inc = await settled(k, 'slow', 120_000);
    const rep = (await api(k, 'GET', `/v1/incarnations/slow/runs/${applyId}`)).body;
    assert.equal(inc.status, 'ready', JSON.stringify(rep.hosts));
    assert.deepEqual(inc.state, { root: out });
    for (const sid of sids) {
      const host = rep.hosts.find((h: any) => h.sid === sid);
      assert.deepEqual(
        host.steps.map((st: any) => st.status),
        Array(STEPS).fill('ok'),
        `${sid}: ${JSON.stringify(host.steps)}`,
      );
      const lines = ledgerLines(sid, applyId);
      const keys = lines.map((l) => `${l.apply_id}#${l.index}`);
      assert.equal(
        new Set(keys).size,
        keys.length,
        `${sid}: a step key recorded more than once: ${JSON.stringify(keys)}`,
      );
      for (let i = 0; i < STEPS; i++) {
        assert.deepEqual(
          lines.filter((l) => l.index === i && l.changed).map((l) => l.apply_id),
          [applyId],
          `${sid} step ${i} changed its file once, on the first send`,
        );
        assert.equal(fs.readFileSync(path.join(out, sid, `f${i}`), 'utf8'), `f${i} on ${sid}\n`);
      }
      // Steps done before the kill came back from the host's ledger after it, not applied again.
      const before = doneAtKill.get(sid)!;
      assert.ok(before.length >= 1);
      for (const i of before)
        assert.equal(host.steps[i].replayed, true, `${sid} step ${i} was answered from the host's ledger`);
      assert.ok(
        host.steps.some((st: any) => !st.replayed),
        `${sid}: some step ran after the restart`,
      );
    }
  });
});
