// Runs a module program shipped with a service, as argv (no shell), with the module protocol:
//   stdin   {"state": "<state>", "params": {...}, "dry_run": bool}      one JSON object
//   stdout  {"changed": bool, "output": "...", "diff": {...}?}          one JSON object, exit 0
// A non-zero exit is a failed step (the output says why: the program's own `output` if it wrote
// one, else the end of its stderr). The program is stopped (its whole process group, SIGKILL) when
// it runs past its timeout or writes more than MAX_OUTPUT_BYTES to stdout; either fails the step.
import { spawn } from 'node:child_process';
import type { ModuleResult } from '../state/types';

export const MAX_OUTPUT_BYTES = 64 * 1024;
const STDERR_TAIL = 2048;
export const MAX_TIMEOUT_MS = 300_000;

export interface ProgramRun {
  file: string;
  input: Record<string, unknown>;
  timeoutMs: number;
  maxOutputBytes?: number;
}

export function runProgram(run: ProgramRun): Promise<ModuleResult> {
  const cap = run.maxOutputBytes ?? MAX_OUTPUT_BYTES;
  const timeoutMs = Math.min(Math.max(1, run.timeoutMs), MAX_TIMEOUT_MS);
  return new Promise((resolve) => {
    let child;
    try {
      // Its own process group, so that a timeout also stops what the program started.
      child = spawn(run.file, [], { stdio: ['pipe', 'pipe', 'pipe'], detached: true, shell: false });
    } catch (err) {
      resolve({ changed: false, ok: false, output: `cannot start the module program: ${(err as Error).message}` });
      return;
    }
    const out: Buffer[] = [];
    let outBytes = 0;
    let errTail = '';
    let stopped: string | undefined;
    const stop = (why: string) => {
      if (stopped) return;
      stopped = why;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const timer = setTimeout(
      () => stop(`the module program ran past its timeout of ${timeoutMs} ms and was stopped`),
      timeoutMs,
    );
    child.stdout.on('data', (b: Buffer) => {
      outBytes += b.length;
      if (outBytes > cap) stop(`the module program wrote more than ${cap} bytes to stdout and was stopped`);
      else out.push(b);
    });
    child.stderr.on('data', (b: Buffer) => {
      errTail = (errTail + b.toString('utf8')).slice(-STDERR_TAIL);
    });
    child.stdin.on('error', () => undefined); // a program that exits without reading its input
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ changed: false, ok: false, output: `cannot start the module program: ${err.message}` });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (stopped) {
        resolve({ changed: false, ok: false, output: stopped });
        return;
      }
      const text = Buffer.concat(out).toString('utf8').trim();
      let answer: Record<string, unknown> | undefined;
      try {
        const v = JSON.parse(text) as unknown;
        if (v !== null && typeof v === 'object' && !Array.isArray(v)) answer = v as Record<string, unknown>;
      } catch {
        /* judged below */
      }
      const said = typeof answer?.['output'] === 'string' ? (answer['output'] as string) : '';
      if (code !== 0) {
        resolve({
          changed: false,
          ok: false,
          output: `the module program ${signal ? `was killed by ${signal}` : `exited with status ${code}`}: ${said || errTail.trim() || '(no output)'}`,
        });
        return;
      }
      if (!answer || typeof answer['changed'] !== 'boolean') {
        resolve({
          changed: false,
          ok: false,
          output: `the module program's answer is not {"changed": bool, "output": "..."}: ${JSON.stringify(text.slice(0, 200))}`,
        });
        return;
      }
      const diff = answer['diff'];
      resolve({
        changed: answer['changed'] as boolean,
        ok: true,
        output: said,
        ...(diff !== null && typeof diff === 'object' && !Array.isArray(diff)
          ? { diff: diff as Record<string, unknown> }
          : {}),
      });
    });
    child.stdin.end(JSON.stringify(run.input));
  });
}
