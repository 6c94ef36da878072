// The leaf source of the gRPC listeners: a renewed leaf written where it can be, a read-only TLS
// folder not mistaken for an operator's change (which would serve the old leaf again), and files an
// operator replaced picked up once whole.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ServerLeaf } from './server-leaf';

function leaf(dir: string, name: string): { cert: string; key: string } {
  const key = path.join(dir, `${name}.key`);
  const cert = path.join(dir, `${name}.crt`);
  execFileSync('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-subj',
    `/CN=${name}`,
    '-days',
    '1',
    '-keyout',
    key,
    '-out',
    cert,
  ]);
  const out = { cert: fs.readFileSync(cert, 'utf8'), key: fs.readFileSync(key, 'utf8') };
  fs.rmSync(key);
  fs.rmSync(cert);
  return out;
}

describe('hub/server-leaf', () => {
  let dir: string;
  let files: { cert: string; key: string };
  let a: { cert: string; key: string };
  let b: { cert: string; key: string };
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'server-leaf-'));
    a = leaf(dir, 'a.keeper.test');
    b = leaf(dir, 'b.keeper.test');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  beforeEach(() => {
    const tls = fs.mkdtempSync(path.join(dir, 'tls-'));
    files = { cert: path.join(tls, 'keeper.crt'), key: path.join(tls, 'keeper.key') };
    fs.writeFileSync(files.cert, a.cert);
    fs.writeFileSync(files.key, a.key);
  });

  it('serves a renewed leaf and writes it to the files', () => {
    const l = new ServerLeaf();
    l.credentials(files, null);
    assert.match(l.current()!.subject, /CN=a.keeper.test/);
    l.serve(b.cert, b.key);
    assert.deepEqual(l.persist(b.cert, b.key), []);
    assert.match(l.current()!.subject, /CN=b.keeper.test/);
    assert.equal(fs.readFileSync(files.cert, 'utf8'), b.cert);
    assert.equal(fs.statSync(files.key).mode & 0o777, 0o600);
    assert.equal(l.reloadIfChanged(), false);
  });

  it('keeps serving the renewed leaf when its files cannot be written', () => {
    const l = new ServerLeaf();
    l.credentials(files, null);
    l.serve(b.cert, b.key);
    // A directory where the temporary file would go makes the write fail, for root too.
    for (const f of [files.cert, files.key])
      fs.mkdirSync(path.join(path.dirname(f), `.${path.basename(f)}.${process.pid}.tmp`));
    assert.deepEqual(l.persist(b.cert, b.key).sort(), [files.cert, files.key].sort());
    assert.equal(fs.readFileSync(files.cert, 'utf8'), a.cert, 'the old files stay');
    assert.equal(l.reloadIfChanged(), false, 'the old files are not an operator change');
    assert.match(l.current()!.subject, /CN=b.keeper.test/);
  });

  it('picks up files an operator replaced, once the pair matches', () => {
    const l = new ServerLeaf();
    l.credentials(files, null);
    fs.writeFileSync(files.cert, b.cert);
    assert.equal(l.reloadIfChanged(), false, 'a new certificate with the old key is half a replacement');
    fs.writeFileSync(files.key, b.key);
    assert.equal(l.reloadIfChanged(), true);
    assert.match(l.current()!.subject, /CN=b.keeper.test/);
  });
});
