// core.cmd.run { argv, shell?, cwd?, env?, timeout?, creates?, removes?, unless?, onlyif? }.
// Runs argv with no shell (`shell: true` written out runs argv[0] with /bin/sh -c). It runs, and
// reports `changed`, unless a guard says it need not: `creates` exists, `removes` does not,
// `unless` exits 0, `onlyif` exits non-zero. The guards are read in a dry run too (they must only
// look, as Salt's are), so a plan says exactly whether the apply will run the command and why; with
// no guard it says the command "runs every time (no guard)".
// A failing command (non-zero exit, timeout) fails the step; its output is captured and capped.
import { promises as fs } from 'node:fs';
import { tail } from '../exec/runner';
import { ParamError, readParams } from './params';
import { defineState } from './shape';
import type { StateDeps, StateModule } from './types';

/** Output of the command kept in the step's result: the last bytes of stdout and stderr. */
export const OUTPUT_CAP = 16 * 1024;
const GUARD_TIMEOUT_MS = 60_000;
const DEFAULT_TIMEOUT_S = 3600;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const NO_GUARD = 'no guard';
/** What a plan says of a command with no guard (issue 45). */
export const EVERY_TIME = 'runs every time (no guard)';

interface CmdParams {
  argv: string[];
  shell: boolean;
  cwd?: string;
  env: Record<string, string>;
  timeoutMs: number;
  creates?: string;
  removes?: string;
  unless?: string[];
  onlyif?: string[];
}

/** Why the command runs or not: the first guard that says "no", or every guard's "yes". */
interface Current {
  run: boolean;
  why: string;
}

function argvOf(p: Record<string, unknown>, key: string): string[] | undefined {
  const v = p[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.length === 0 || !v.every((a) => typeof a === 'string' && a.length > 0)) {
    throw new ParamError(
      `param "${key}" must be a non-empty list of non-empty strings (argv: the program, then its arguments)`,
    );
  }
  return v as string[];
}

function absPath(p: Record<string, unknown>, key: string): string | undefined {
  const v = p[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || !v.startsWith('/') || v.includes('\0'))
    throw new ParamError(`param "${key}" must be an absolute path`);
  return v;
}

const exists = (p: string) =>
  fs.lstat(p).then(
    () => true,
    (e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? false : Promise.reject(e)),
  );

/** The last `cap` bytes of a text, marked as cut. */
export function capped(text: string, cap = OUTPUT_CAP): string {
  const b = Buffer.from(text, 'utf8');
  if (b.length <= cap) return text;
  return `[first ${b.length - cap} bytes cut]\n${b.subarray(b.length - cap).toString('utf8')}`;
}

export function createCmdRun(deps: StateDeps): StateModule {
  const command = (p: CmdParams, argv: string[], timeoutMs: number) => {
    const [file, ...args] = p.shell && argv === p.argv ? ['/bin/sh', '-c', argv[0]!] : argv;
    return deps.runner({ file: file!, args, env: p.env, timeoutMs, ...(p.cwd === undefined ? {} : { cwd: p.cwd }) });
  };
  const shown = (p: CmdParams, showArgs: boolean) =>
    showArgs
      ? `\`${p.shell ? p.argv[0] : p.argv.join(' ')}\`${p.shell ? ' with /bin/sh -c' : ''}`
      : `${p.shell ? '/bin/sh -c ...' : p.argv[0]} (arguments not shown: the step may hold a secret)`;
  return defineState<CmdParams, Current>({
    name: 'core.cmd.run',
    parse(raw) {
      const p = readParams(raw, ['argv', 'shell', 'cwd', 'env', 'timeout', 'creates', 'removes', 'unless', 'onlyif']);
      const argv = argvOf(p, 'argv');
      if (!argv) throw new ParamError('param "argv" is required');
      if (p.shell !== undefined && typeof p.shell !== 'boolean')
        throw new ParamError('param "shell" must be true or false');
      const shell = p.shell === true;
      if (shell && argv.length !== 1)
        throw new ParamError('param "argv" must be one string (the shell command) with shell: true');
      const env: Record<string, string> = {};
      if (p.env !== undefined && p.env !== null) {
        if (typeof p.env !== 'object' || Array.isArray(p.env))
          throw new ParamError('param "env" must be a map of names to strings');
        for (const [k, v] of Object.entries(p.env as Record<string, unknown>)) {
          if (!ENV_NAME.test(k))
            throw new ParamError(
              `param "env" has an invalid name ${JSON.stringify(k)} (letters, digits and _; not starting with a digit)`,
            );
          if (typeof v !== 'string') throw new ParamError(`param "env" value of ${k} must be a string`);
          env[k] = v;
        }
      }
      const t = p.timeout;
      if (t !== undefined && (typeof t !== 'number' || !Number.isInteger(t) || t < 1 || t > 86400))
        throw new ParamError('param "timeout" must be whole seconds from 1 to 86400');
      const out: CmdParams = { argv, shell, env, timeoutMs: ((t as number | undefined) ?? DEFAULT_TIMEOUT_S) * 1000 };
      const cwd = absPath(p, 'cwd');
      if (cwd !== undefined) out.cwd = cwd;
      const creates = absPath(p, 'creates');
      if (creates !== undefined) out.creates = creates;
      const removes = absPath(p, 'removes');
      if (removes !== undefined) out.removes = removes;
      const unless = argvOf(p, 'unless');
      if (unless) out.unless = unless;
      const onlyif = argvOf(p, 'onlyif');
      if (onlyif) out.onlyif = onlyif;
      return out;
    },
    async read(p) {
      const yes: string[] = [];
      if (p.creates !== undefined) {
        if (await exists(p.creates)) return { run: false, why: `creates: ${p.creates} exists` };
        yes.push(`creates: ${p.creates} does not exist`);
      }
      if (p.removes !== undefined) {
        if (!(await exists(p.removes))) return { run: false, why: `removes: ${p.removes} does not exist` };
        yes.push(`removes: ${p.removes} exists`);
      }
      if (p.cwd !== undefined && !(await exists(p.cwd))) throw new Error(`cwd ${p.cwd} does not exist`);
      for (const key of ['unless', 'onlyif'] as const) {
        const g = p[key];
        if (!g) continue;
        const r = await command(p, g, GUARD_TIMEOUT_MS);
        const said = `${key}: \`${g[0]}\` exited ${r.code}`;
        if ((key === 'unless') === (r.code === 0)) return { run: false, why: said };
        yes.push(said);
      }
      return { run: true, why: yes.length ? yes.join('; ') : NO_GUARD };
    },
    diff(p, cur, ctx) {
      if (!cur.run) return null;
      // The command is the content of this step: shown in a plan only when the step holds no secret.
      const showArgs = ctx.dryRun && ctx.showContent === true;
      // Without a guard nothing on the host says whether the command is needed: the plan says it
      // runs every time, not a change it cannot know (soul-lint warns, SL033).
      const unguarded = cur.why === NO_GUARD;
      const because = unguarded ? EVERY_TIME : cur.why;
      return {
        summary: unguarded ? `run ${shown(p, showArgs)}: ${EVERY_TIME}` : `run ${shown(p, showArgs)} (${cur.why})`,
        diff: {
          command: showArgs ? (p.shell ? ['/bin/sh', '-c', p.argv[0]] : p.argv) : [p.shell ? '/bin/sh' : p.argv[0]],
          because,
        },
      };
    },
    describe: (_p, cur) => `not run: ${cur.why}`,
    async apply(p, cur) {
      const r = await command(p, p.argv, p.timeoutMs);
      const out = [
        r.stdout.trim() && `stdout:\n${capped(r.stdout.trimEnd())}`,
        r.stderr.trim() && `stderr:\n${capped(r.stderr.trimEnd())}`,
      ]
        .filter(Boolean)
        .join('\n');
      if (r.code !== 0)
        throw new Error(
          `${p.shell ? '/bin/sh -c' : p.argv[0]} exited ${r.code} (${cur.why})${out ? `: ${tail(out, 40)}` : ''}`,
        );
      return `ran ${p.shell ? '/bin/sh -c' : p.argv[0]}, exit 0 (${cur.why})${out ? `\n${out}` : ''}`;
    },
  });
}
