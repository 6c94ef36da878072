// Runs a module program shipped with a service, as argv (no shell), with the module protocol:
//   stdin   {"state": "<state>", "params": {...}, "dry_run": bool}      one JSON object
//   stdout  {"changed": bool, "output": "...", "diff": {...}?}          one JSON object, exit 0
// The same input is also in a file (mode 0600, removed once the program ended) whose path is in
// KEEPER_PARAMS_FILE, as Ansible's WANT_JSON, and each scalar param is in KEEPER_PARAM_<NAME>, with
// KEEPER_STATE and KEEPER_DRY_RUN (1 or 0), so a `sh` program needs no JSON parser. A param whose
// value holds a secret the keeper named for this step is only in stdin and the file, never in the
// environment: whatever the program starts (runuser, psql) inherits its environment, and the
// environment of a process running as that user is readable by that user in /proc/<pid>/environ.
// The program starts in `/` (the soul's own folder is 0700: `runuser -u postgres` could not enter it).
// A non-zero exit is a failed step; its output is the program's own `output` if it answered one,
// else what it wrote to stdout, then the end of its stderr (both capped). The program is stopped
// (its whole process group, SIGKILL) when it runs past its timeout or writes more than
// MAX_OUTPUT_BYTES to stdout; either fails the step.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { ModuleResult } from '../state/types';

export const MAX_OUTPUT_BYTES = 64 * 1024;
const STDERR_TAIL = 2048;
/** How much of a failing program's stdout its step's output keeps (the end of it). */
const STDOUT_TAIL = 4096;
export const MAX_TIMEOUT_MS = 300_000;
export const PARAMS_FILE_ENV = 'KEEPER_PARAMS_FILE';
export const PARAM_ENV_PREFIX = 'KEEPER_PARAM_';

export interface ProgramRun {
  file: string;
  /** module.yml `runtime:`: `node` (this soul's own Node.js), `sh` (/bin/sh); absent: the file itself. */
  runtime?: string;
  input: { state: string; params: unknown; dry_run: boolean };
  timeoutMs: number;
  maxOutputBytes?: number;
  /** A folder only the soul can read (0700), where the params file is written for the run. */
  scratchDir: string;
  /** Secret values of this step: a param holding one is never put into the environment. */
  secrets?: readonly string[];
}

/** The argv that starts the program: its runtime's interpreter, or the program itself. */
export function programArgv(file: string, runtime: string | undefined): [string, string[]] {
  if (runtime === 'node') return [process.execPath, [file]];
  if (runtime === 'sh') return ['/bin/sh', [file]];
  return [file, []];
}

/** KEEPER_PARAM_<NAME> for each scalar param that holds no secret: the name upper-cased, any
 *  character but A-Z, 0-9 and _ made _. */
export function paramEnv(params: unknown, secrets: readonly string[] = []): Record<string, string> {
  const env: Record<string, string> = {};
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return env;
  for (const [name, v] of Object.entries(params as Record<string, unknown>)) {
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') continue;
    const text = String(v);
    if (text.includes('\0') || secrets.some((s) => s !== '' && text.includes(s))) continue;
    env[PARAM_ENV_PREFIX + name.toUpperCase().replace(/[^A-Z0-9_]/g, '_')] = text;
  }
  return env;
}

function programEnv(run: ProgramRun, paramsFile: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  // A KEEPER_PARAM_* the soul itself was started with must not pass for a param of this step.
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith(PARAM_ENV_PREFIX)) env[k] = v;
  return {
    ...env,
    ...paramEnv(run.input.params, run.secrets),
    [PARAMS_FILE_ENV]: paramsFile,
    KEEPER_STATE: run.input.state,
    KEEPER_DRY_RUN: run.input.dry_run ? '1' : '0',
  };
}

const tailOf = (text: string, max: number) => (text.length > max ? `…${text.slice(-max)}` : text);

export function runProgram(run: ProgramRun): Promise<ModuleResult> {
  const cap = run.maxOutputBytes ?? MAX_OUTPUT_BYTES;
  const timeoutMs = Math.min(Math.max(1, run.timeoutMs), MAX_TIMEOUT_MS);
  const inputJson = JSON.stringify(run.input);
  let paramsFile: string;
  try {
    fs.mkdirSync(run.scratchDir, { recursive: true, mode: 0o700 });
    paramsFile = path.join(run.scratchDir, `.params-${randomBytes(8).toString('hex')}.json`);
    fs.writeFileSync(paramsFile, inputJson, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    return Promise.resolve({
      changed: false,
      ok: false,
      output: `cannot write the module program's params file: ${(err as Error).message}`,
    });
  }
  const done = (r: ModuleResult): ModuleResult => {
    fs.rmSync(paramsFile, { force: true });
    return r;
  };
  return new Promise<ModuleResult>((resolve) => {
    let child;
    const [cmd, args] = programArgv(run.file, run.runtime);
    try {
      // Its own process group, so that a timeout also stops what the program started.
      child = spawn(cmd, args, {
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
        shell: false,
        cwd: '/',
        env: programEnv(run, paramsFile),
      });
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
      const stderr = errTail.trim() ? `\n${errTail.trim()}` : '';
      if (code !== 0) {
        // Its own words, else whatever it wrote (a non-JSON line is often the cause), then stderr.
        const words = (said || (answer ? '' : tailOf(text, STDOUT_TAIL))) + stderr;
        resolve({
          changed: false,
          ok: false,
          output: `the module program ${signal ? `was killed by ${signal}` : `exited with status ${code}`}: ${words.trim() || '(no output)'}`,
        });
        return;
      }
      if (!answer || typeof answer['changed'] !== 'boolean') {
        resolve({
          changed: false,
          ok: false,
          output: `the module program's answer is not {"changed": bool, "output": "..."}: ${JSON.stringify(tailOf(text, STDOUT_TAIL))}${stderr}`,
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
    child.stdin.end(inputJson);
  }).then(done);
}
