import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { byPriority, loadSoulConfig, readCa } from './config';
import { SoulError } from './errors';

describe('agent/config', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'soul-config-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const write = (text: string) => {
    const f = path.join(dir, 'soul.yml');
    fs.writeFileSync(f, text);
    return f;
  };
  const base = (tls: string) => `sid: A.keeper.test
paths: { modules: modules, seed: seed }
keeper:
  endpoints:
    - { host: b, bootstrap_port: 2, event_stream_port: 3, priority: 20 }
    - { host: a, bootstrap_port: 2, event_stream_port: 3, priority: 10 }
    - { host: c, bootstrap_port: 2, event_stream_port: 3, priority: 20 }
${tls}`;

  it('loads, lowercases the sid and resolves paths against the file', () => {
    const c = loadSoulConfig(write(base('  tls: { ca: ca.pem }')));
    assert.equal(c.sid, 'a.keeper.test');
    assert.equal(c.paths.seed, path.join(dir, 'seed'));
    assert.equal(c.keeper.tls.ca, path.join(dir, 'ca.pem'));
    assert.deepEqual(
      byPriority(c.keeper.endpoints).map((e) => e.host),
      ['a', 'b', 'c'],
    );
  });

  it('names unknown and missing keys, exit code 2', () => {
    assert.throws(
      () => loadSoulConfig(write('sid: a.keeper.test\npaths: { modules: m, sed: s }\nkeeper: { endpoints: [] }\n')),
      (err: unknown) => {
        assert.ok(err instanceof SoulError);
        assert.equal(err.exitCode, 2);
        assert.match(err.message, /paths must have required property 'seed'/);
        assert.match(err.message, /\(sed\)/);
        assert.match(err.message, /keeper\.endpoints must NOT have fewer than 1 items/);
        return true;
      },
    );
  });

  it('reports a missing, empty or unreadable CA as "keeper.tls.ca is empty"', () => {
    const expectEmpty = (tls: string, detail: RegExp) =>
      assert.throws(
        () => readCa(loadSoulConfig(write(base(tls)))),
        (err: unknown) => {
          assert.ok(err instanceof SoulError);
          assert.match(err.message, /^keeper\.tls\.ca is empty: /);
          assert.match(err.message, detail);
          assert.match(err.fix, /no trust on first use/);
          return true;
        },
      );
    expectEmpty('', /no CA file is configured/);
    expectEmpty('  tls: { ca: "" }', /no CA file is configured/);
    expectEmpty('  tls: { ca: missing.pem }', /cannot be read \(ENOENT\)/);
    fs.writeFileSync(path.join(dir, 'empty.pem'), '');
    expectEmpty('  tls: { ca: empty.pem }', /holds no PEM certificate/);
  });
});
