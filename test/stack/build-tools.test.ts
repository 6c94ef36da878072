// scripts/build-tools.sh decides whether a cached Go tool can be reused. A wrong answer is what
// broke every fresh machine once (a directory at the tool's path counted as "executable"), so these
// tests plant every kind of broken tool in a private cache and check the verdict. The rebuild path
// runs against a stand-in `go` on PATH that writes a tiny program instead of compiling one: the
// script's own logic (prove before caching, never cache a broken build) is what is under test, and
// no real Go build is needed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../support/repo';

const script = path.join(repoRoot(), 'scripts', 'build-tools.sh');

interface Run {
  code: number;
  out: string;
  err: string;
}

describe('build-tools: the tool cache', function () {
  let dir: string;
  let env: NodeJS.ProcessEnv;

  function run(...args: string[]): Run {
    const r = spawnSync('bash', [script, ...args], { env, encoding: 'utf8' });
    return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
  }
  const toolPath = (which: 'temporal' | 'bao'): string => run(`path-${which}`).out.trim();

  function plant(file: string, content: string | null, mode = 0o755): void {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    if (content === null) fs.mkdirSync(file);
    else fs.writeFileSync(file, content, { mode });
  }

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keeper-tools-test-'));
    env = { ...process.env, KEEPER_TOOLS: path.join(dir, 'tools'), KEEPER_TOOLS_LOG_DIR: path.join(dir, 'logs') };
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('keys every cache directory by the version and the recipe', () => {
    const key = run('key').out.trim();
    assert.match(key, /^[0-9a-f]{12}$/);
    assert.equal(toolPath('temporal'), path.join(dir, 'tools', `temporal-1.5.1-${key}`, 'temporal'));
    assert.equal(toolPath('bao'), path.join(dir, 'tools', `vault-1.13.0-${key}`, 'vault'));
  });

  it('finds a missing tool unusable', () => {
    const r = run('check', 'temporal');
    assert.equal(r.code, 1);
    assert.match(r.out, /does not exist/);
  });

  it('finds a directory at the tool path unusable (the bug that broke fresh machines)', () => {
    plant(toolPath('bao'), null);
    const r = run('check', 'bao');
    assert.equal(r.code, 1);
    assert.match(r.out, /vault is a directory, not a program/);
  });

  it('finds an empty file unusable', () => {
    plant(toolPath('temporal'), '');
    const r = run('check', 'temporal');
    assert.equal(r.code, 1);
    assert.match(r.out, /is empty/);
  });

  it('finds a file that does not run unusable', () => {
    plant(toolPath('temporal'), '\x7fELF garbage that is no program');
    const r = run('check', 'temporal');
    assert.equal(r.code, 1);
    assert.match(r.out, /does not run/);
  });

  it('finds a file without the execute bit unusable', () => {
    plant(toolPath('temporal'), '#!/bin/sh\necho "temporal version 1.5.1"\n', 0o644);
    const r = run('check', 'temporal');
    assert.equal(r.code, 1);
    assert.match(r.out, /is not executable/);
  });

  it('finds a tool of another version unusable', () => {
    plant(toolPath('temporal'), '#!/bin/sh\necho "temporal version 1.4.0 (Server 1.26.2, UI 2.34.0)"\n');
    const r = run('check', 'temporal');
    assert.equal(r.code, 1);
    assert.match(r.out, /not version 1\.5\.1/);
  });

  it('reuses a matching tool that runs', () => {
    plant(
      toolPath('temporal'),
      '#!/bin/sh\n[ "$1" = --version ] && echo "temporal version 1.5.1 (Server 1.27.1, UI 2.36.0)"\n',
    );
    plant(toolPath('bao'), '#!/bin/sh\n[ "$1" = version ] && echo "Vault v1.13.0, built 2023-03-01"\n');
    assert.equal(run('check', 'temporal').code, 0);
    assert.equal(run('check', 'bao').code, 0);
    // `all` with both tools usable builds nothing, so it needs no Go at all.
    const r = run('all');
    assert.equal(r.code, 0, r.err);
    assert.doesNotMatch(r.err, /building/);
  });

  describe('rebuilding, with a stand-in go', () => {
    // A `go` that answers the few calls of the recipe and "builds" a shell program reporting the
    // version asked for, or, with FAKE_GO_BROKEN, an empty file.
    const fakeGo = `#!/bin/bash
set -e
case "$1 $2" in
  "env GOVERSION") echo go1.99-fake ;;
  "mod download")
    case "$4" in
      github.com/hashicorp/vault@*) mkdir -p "$FAKE_SRC/vault"; echo "{\\"Dir\\": \\"$FAKE_SRC\\"}" ;;
      *) echo "403 Forbidden" >&2; exit 1 ;;
    esac ;;
  "mod edit") : ;;
  install*)
    mkdir -p "$GOBIN"
    if [ -n "$FAKE_GO_BROKEN" ]; then : > "$GOBIN/temporal"; else
      printf '#!/bin/sh\\necho "temporal version 1.5.1"\\n' > "$GOBIN/temporal"; fi
    chmod +x "$GOBIN/temporal" ;;
  build*)
    out=""; while [ $# -gt 0 ]; do [ "$1" = -o ] && out="$2"; shift; done
    mkdir -p "$(dirname "$out")"
    printf '#!/bin/sh\\necho "Vault v1.13.0"\\n' > "$out"; chmod +x "$out" ;;
  *) echo "fake go: unexpected $*" >&2; exit 3 ;;
esac
`;
    beforeEach(() => {
      const bin = path.join(dir, 'bin');
      plant(path.join(bin, 'go'), fakeGo);
      fs.mkdirSync(path.join(dir, 'src'));
      env = { ...env, PATH: `${bin}:${process.env['PATH'] ?? ''}`, FAKE_SRC: path.join(dir, 'src') };
    });

    it('rebuilds a tool whose cached path is a directory, and says why', () => {
      plant(toolPath('temporal'), null);
      const r = run('all');
      assert.equal(r.code, 0, r.err);
      assert.match(r.err, /the cached Temporal CLI is unusable \(.* is a directory, not a program\); rebuilding/);
      assert.ok(fs.statSync(toolPath('temporal')).isFile());
      assert.equal(run('check', 'temporal').code, 0);
      assert.equal(run('check', 'bao').code, 0);
      // The Go output is in the logs, not on the terminal.
      assert.ok(fs.existsSync(path.join(dir, 'logs', 'build-temporal.log')));
    });

    it('never caches a freshly built tool that does not work, and names the log', () => {
      env = { ...env, FAKE_GO_BROKEN: '1' };
      const r = run('all');
      assert.equal(r.code, 1);
      assert.match(r.err, /the freshly built tool does not work: .* is empty/);
      assert.match(r.err, /logs: .*build-\*\.log; retry: make stack/);
      assert.equal(fs.existsSync(toolPath('temporal')), false);
    });
  });
});
