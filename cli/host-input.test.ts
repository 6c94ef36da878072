// keeperctl's per-host input (docs/incarnations.md "Per-host input"): --host-input-file with hosts:
// and covens:, --host-input <sid>=<file> on top, a usage error naming the flag for a bad file, and
// `incarnations get` listing which hosts and covens have an entry and the keys it sets.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CliError } from './errors';
import { incarnationDetails } from './incarnation-view';
import { parseHostInput } from './input';

describe('keeperctl per-host input', () => {
  let dir: string;
  const write = (name: string, text: string) => {
    const f = path.join(dir, name);
    fs.writeFileSync(f, text);
    return f;
  };
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'host-input-cli-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads hosts: and covens: from a file, and one host from <sid>=<file> on top', () => {
    const file = write('hosts.yml', 'hosts:\n  db-1.example.com: {port: 5433}\ncovens:\n  eu: {region: eu-west}\n');
    const one = write('db-2.yml', 'port: 5434\ngreeting: null\n');
    assert.deepEqual(parseHostInput([`db-2.example.com=${one}`], file), {
      hosts: { 'db-1.example.com': { port: 5433 }, 'db-2.example.com': { port: 5434, greeting: null } },
      covens: { eu: { region: 'eu-west' } },
    });
    assert.equal(parseHostInput(undefined, undefined), undefined);
  });

  it('refuses a file with other keys, and a pair without =, naming the flag', () => {
    const bad = write('bad.yml', 'host_vars:\n  a: {}\n');
    assert.throws(
      () => parseHostInput(undefined, bad),
      (e: unknown) => e instanceof CliError && /--host-input-file .*unknown key\(s\) host_vars/.test(e.message),
    );
    assert.throws(
      () => parseHostInput(['db-1.example.com'], undefined),
      (e: unknown) => e instanceof CliError && /--host-input "db-1.example.com" is not <sid>=<file>/.test(e.message),
    );
  });

  it('incarnations get lists each entry with the keys it sets, not the values', () => {
    const text = incarnationDetails({
      name: 'pg',
      host_input: {
        covens: { eu: { region: 'x' } },
        hosts: { 'db-1.example.com': { port: 5433, password: 'secretstore:kv/a#b' } },
      },
    });
    assert.match(text, /coven eu: region; host db-1\.example\.com: port, password/);
    assert.doesNotMatch(text, /secretstore:|5433/);
  });
});
