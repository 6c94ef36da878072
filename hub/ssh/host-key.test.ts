import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hostKeyText, parseHostKey, sameHostKey } from './host-key';
import { shellQuote } from './transport';

function keypair(dir: string, name: string): { pub: string; priv: string } {
  const f = path.join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'a comment', '-f', f]);
  return { pub: fs.readFileSync(`${f}.pub`, 'utf8'), priv: fs.readFileSync(f, 'utf8') };
}

describe('SSH host keys', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostkey-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('parses a .pub line, gives its canonical text without the comment, and tells keys apart', () => {
    const a = keypair(dir, 'a');
    const b = keypair(dir, 'b');
    const pa = parseHostKey(a.pub);
    const pb = parseHostKey(b.pub);
    assert.ok(!('error' in pa) && !('error' in pb));
    assert.equal(hostKeyText(pa.blob), a.pub.split(' ').slice(0, 2).join(' '));
    assert.equal(pa.type, 'ssh-ed25519');
    assert.ok(sameHostKey(pa.blob, (parseHostKey(a.pub.trim()) as { blob: Buffer }).blob));
    assert.ok(!sameHostKey(pa.blob, pb.blob));
  });

  it('refuses text that is not a public key, and a private key given by mistake', () => {
    assert.match((parseHostKey('ssh-ed25519 not-base64!') as { error: string }).error, /not an OpenSSH public key/);
    assert.match((parseHostKey(keypair(dir, 'c').priv) as { error: string }).error, /private key/);
  });

  it('quotes values for the remote shell so that none is parsed by it', () => {
    const v = "/var/lib/x'; rm -rf / #";
    const out = execFileSync('sh', ['-c', `printf %s ${shellQuote(v)}`]).toString();
    assert.equal(out, v);
  });
});
