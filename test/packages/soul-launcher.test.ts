// The soul's launcher runs its runtime with packaging/soul/node-flags (V8's lite mode, a small young
// generation: docs/performance.md). Those flags must not make every soul command print V8 warnings
// (issue 37 row 12: lite mode turns WebAssembly off and V8 warned about --expose_wasm on each run).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../support/repo';

describe('soul launcher flags (packaging/soul/node-flags)', () => {
  it("soul --version under the package's node flags prints the version and nothing on stderr", () => {
    const flags = fs
      .readFileSync(path.join(repoRoot(), 'packaging', 'soul', 'node-flags'), 'utf8')
      .trim()
      .split(/\s+/);
    assert.ok(flags.includes('--lite-mode'), "the flags this test guards are still the package's");
    const version = JSON.parse(fs.readFileSync(path.join(repoRoot(), 'package.json'), 'utf8')).version as string;
    const r = spawnSync(process.execPath, [...flags, path.join(repoRoot(), 'bin', 'soul'), '--version'], {
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), version);
    assert.equal(r.stderr, '');
  });
});
