// `keeper check-config` checks what a start would find wrong with the files keeper.yml names
// (issue 37 row 10: it said `valid` for the unedited shipped file and for TLS and secret_id files
// that did not exist): each missing file, a secret_id file wider than 0400, a world-readable key,
// a certificate that is not its key's; each problem names the key and the fix, exit 1. The real
// program on the shipped keeper.yml, with the stack's TLS files and secret_ids copied beside it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../support/repo';
import { stackFile } from '../support/stack-env';

const KEEPER = path.join(repoRoot(), 'bin', 'keeper');

async function checkConfig(file: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await promisify(execFile)(KEEPER, ['check-config', '--offline', `--config=${file}`], { timeout: 60_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('keeper check-config: the files keeper.yml names', function () {
  this.timeout(120_000);
  let dir: string;
  let file: string;
  const put = (from: string, to: string, mode: number) => {
    fs.mkdirSync(path.dirname(path.join(dir, to)), { recursive: true });
    fs.copyFileSync(from, path.join(dir, to));
    fs.chmodSync(path.join(dir, to), mode);
  };
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'check-config-'));
    file = path.join(dir, 'keeper.yml');
    fs.copyFileSync(path.join(repoRoot(), 'packaging', 'keeper', 'keeper.yml'), file);
  });
  after(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the unedited shipped file alone: exit 1, every missing file named by its key, with the fix', async () => {
    const r = await checkConfig(file);
    assert.equal(r.code, 1, r.stdout);
    for (const key of [
      'listen.grpc.bootstrap.tls.cert',
      'listen.grpc.bootstrap.tls.key',
      'listen.grpc.event_stream.tls.ca',
      'temporal.tls.ca',
      'temporal.tls.cert',
      'temporal.tls.key',
      'secretstore.auth.secret_id_file',
      'secretstore.scenario_auth.secret_id_file',
    ]) {
      assert.match(
        r.stderr,
        new RegExp(`  - ${key.replace(/\./g, '\\.')}: ${dir}/\\S+ does not exist; fix: install the file there`),
        key,
      );
    }
    assert.doesNotMatch(r.stdout, /valid/);
  });

  it("with the files in place at the guide's modes: valid", async () => {
    const tls = stackFile('tls');
    put(path.join(tls, 'keeper.crt'), 'tls/keeper.crt', 0o644);
    put(path.join(tls, 'keeper.key'), 'tls/keeper.key', 0o640);
    put(path.join(tls, 'ca.pem'), 'tls/ca.pem', 0o644);
    // The stack's Temporal has its own PKI only in mTLS mode (make demo; make test runs it plain): a
    // matching pair from the keeper's PKI stands in for the Temporal client's, whatever the mode.
    put(path.join(tls, 'ca.pem'), 'tls/temporal-ca.pem', 0o644);
    put(path.join(tls, 'keeper.crt'), 'tls/temporal-client.crt', 0o644);
    put(path.join(tls, 'keeper.key'), 'tls/temporal-client.key', 0o640);
    put(stackFile('approle-secret-id'), 'approle-secret-id', 0o400);
    put(stackFile('approle-scenario-secret-id'), 'approle-scenario-secret-id', 0o400);
    const r = await checkConfig(file);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `${file}: valid (offline: the network was not checked)\n`);
  });

  it("a secret_id file at 0440, a world-readable key and a certificate that is not its key's: each named with its fix, no secret printed", async () => {
    fs.chmodSync(path.join(dir, 'approle-secret-id'), 0o440);
    fs.chmodSync(path.join(dir, 'tls/keeper.key'), 0o644);
    // The Temporal client certificate beside a key of its own: a pair that does not match.
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    fs.writeFileSync(path.join(dir, 'tls/temporal-client.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }), {
      mode: 0o640,
    });
    const r = await checkConfig(file);
    assert.equal(r.code, 1);
    const secretFile = path.join(dir, 'approle-secret-id');
    assert.ok(
      r.stderr.includes(
        `  - secretstore.auth.secret_id_file: ${secretFile} has mode 0440: a secret_id file must be readable by its owner alone (mode 0400); fix: chown <the keeper's user> ${secretFile} && chmod 0400 ${secretFile}`,
      ),
      r.stderr,
    );
    assert.ok(
      r.stderr.includes(
        `  - listen.grpc.bootstrap.tls.key: ${dir}/tls/keeper.key has mode 0644, readable by every user; fix: chown root:keeper ${dir}/tls/keeper.key && chmod 0640`,
      ),
      r.stderr,
    );
    assert.ok(
      r.stderr.includes(
        `  - temporal.tls.cert: ${dir}/tls/temporal-client.crt does not match its key ${dir}/tls/temporal-client.key (temporal.tls.key)`,
      ),
      r.stderr,
    );
    assert.ok(!r.stderr.includes(fs.readFileSync(secretFile, 'utf8').trim()), 'the secret_id is never printed');
    assert.equal(r.stderr.match(/^ {2}- /gm)?.length, 3, `only these problems:\n${r.stderr}`);
  });

  it("with server_leaf, a leaf folder the keeper's user cannot write is named with the fix; one it owns passes (issue 37 row 5)", async () => {
    // Run as an unprivileged user (nobody), as the guide runs it as keeper: root may write anywhere.
    // nobody keeps CAP_DAC_READ_SEARCH (read and search only, never write): the checkout may sit
    // under a folder only root may enter (a clone in /root, or the first-time rehearsal's 0700
    // temporary folder), and nobody must still be able to start bin/keeper from it.
    const own = fs.mkdtempSync('/tmp/check-leaf-');
    try {
      fs.chmodSync(own, 0o755);
      const tlsDir = path.join(own, 'tls');
      fs.mkdirSync(tlsDir, { mode: 0o755 });
      const conf = path.join(own, 'keeper.yml');
      const shipped = fs.readFileSync(path.join(repoRoot(), 'packaging', 'keeper', 'keeper.yml'), 'utf8');
      fs.writeFileSync(
        conf,
        shipped.replace(
          '  pki_role: soul\n',
          '  pki_role: soul\n  server_leaf: { pki_role: keeper-server, common_name: keeper-1.example.com }\n',
        ),
        { mode: 0o644 },
      );
      const asNobody = async () => {
        try {
          await promisify(execFile)(
            'setpriv',
            [
              '--reuid=65534',
              '--regid=65534',
              '--clear-groups',
              '--inh-caps=+dac_read_search',
              '--ambient-caps=+dac_read_search',
              KEEPER,
              'check-config',
              '--offline',
              `--config=${conf}`,
            ],
            { timeout: 60_000 },
          );
          return '';
        } catch (err) {
          return (err as { stderr: string }).stderr;
        }
      };
      const line = `  - listen.grpc.bootstrap.tls.cert: secretstore.server_leaf renews the leaf into ${tlsDir}, which this user cannot write (EACCES); fix: keep the leaf in the keeper's state folder (/var/lib/keeper/tls, owned by keeper)`;
      const refused = await asNobody();
      assert.ok(refused.includes(line), refused);
      fs.chownSync(tlsDir, 65534, 65534);
      const owned = await asNobody();
      assert.match(owned, /secretstore\.auth\.secret_id_file/, 'check-config ran and found the other problems');
      assert.ok(!owned.includes('server_leaf renews the leaf'), owned);
    } finally {
      fs.rmSync(own, { recursive: true, force: true });
    }
  });
});
