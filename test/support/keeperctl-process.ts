// keeperctl as its own process (bin/keeperctl, node of this test), for the tests that run it as an
// operator would: its whole environment given (nothing of the test's own leaks in), its stdin no
// terminal (empty unless `input`), and what it printed and its exit code returned.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from './repo';

export interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

export const BIN = path.join(repoRoot(), 'bin', 'keeperctl');

export function runKeeperctl(args: string[], env: NodeJS.ProcessEnv, input = ''): Promise<Result> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.stdin.end(input);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}
