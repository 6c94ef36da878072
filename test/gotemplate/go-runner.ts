/**
 * Builds the Go reference renderer (main.go, funcs.go) once per source hash
 * into a cache outside the repository and runs it on a corpus.
 */
import { execFileSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { repoRoot } from '../lint/paths';
import type { CorpusCase } from './corpus';

export interface GoResult {
  name: string;
  ok: boolean;
  output: string;
  error?: string;
}

const SOURCES = ['go.mod', 'main.go', 'funcs.go'];

export function goBinary(): string {
  const go = process.env['GO'] ?? (fs.existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : 'go');
  const src = path.join(repoRoot(), 'test', 'gotemplate');
  const hash = crypto.createHash('sha256');
  for (const f of SOURCES) hash.update(fs.readFileSync(path.join(src, f)));
  const cacheRoot = process.env['KEEPER_TOOLS'] ?? path.join(os.homedir(), '.cache', 'keeper-tools');
  const dir = path.join(cacheRoot, `gotemplate-${hash.digest('hex').slice(0, 16)}`);
  const bin = path.join(dir, 'gotemplate');
  if (!fs.existsSync(bin)) {
    fs.mkdirSync(dir, { recursive: true });
    const tmp = `${bin}.${process.pid}.tmp`;
    execFileSync(go, ['build', '-o', tmp, '.'], {
      cwd: src,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, GOFLAGS: '-mod=mod', CGO_ENABLED: '0' },
    });
    fs.renameSync(tmp, bin);
  }
  return bin;
}

export function runGo(cases: readonly CorpusCase[]): GoResult[] {
  const out = execFileSync(goBinary(), [], { input: JSON.stringify(cases), maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(out.toString('utf8')) as GoResult[];
}
