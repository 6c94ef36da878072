// A module shipped with a service, as a state module of this soul for the step that carries it:
// the program is taken from the cache (agent/modules/cache.ts, checked by hash before each run)
// and run with the module protocol (agent/modules/runner.ts). A program without a dry run is not
// started in check mode: the plan says that it would run.
import type { StateModule, StateRegistry } from '../state/index';
import { ensureProgram, ProgramHashError } from './cache';
import { runProgram } from './runner';

export interface StepProgram {
  sha256: string;
  contentBase64: string;
  dryRun: boolean;
  timeoutMs: number;
  /** module.yml `runtime:` (`node`, `sh`); absent: the program runs itself (#! line). */
  runtime?: string;
}

export function serviceModule(name: string, program: StepProgram, cacheDir: string): StateModule {
  const state = name.split('.').pop()!;
  return {
    name,
    async run(params, ctx) {
      let cached;
      try {
        cached = ensureProgram(cacheDir, { sha256: program.sha256, contentBase64: program.contentBase64 });
      } catch (err) {
        const why =
          err instanceof ProgramHashError ? err.message : `cannot cache the module program: ${(err as Error).message}`;
        return { changed: false, ok: false, output: `${name}: ${why}` };
      }
      const note = cached.note ? `${cached.note}\n` : '';
      if (ctx.dryRun && !program.dryRun) {
        return {
          changed: true,
          ok: true,
          output: `${note}would run ${name} (its program has no dry run, so what it would change is not known)`,
        };
      }
      const r = await runProgram({
        file: cached.file,
        input: { state, params, dry_run: ctx.dryRun },
        timeoutMs: program.timeoutMs,
        scratchDir: cacheDir,
        ...(program.runtime ? { runtime: program.runtime } : {}),
        ...(ctx.secrets?.length ? { secrets: ctx.secrets } : {}),
      });
      return { ...r, output: `${note}${r.output}` };
    },
  };
}

/** The soul's registry for one step: its own modules, and the step's shipped module when it carries one.
 *  A shipped module is never looked up under a `core.*` name. */
export function withProgram(
  registry: Pick<StateRegistry, 'get'>,
  module: string,
  program: StepProgram | undefined,
  cacheDir: string,
): Pick<StateRegistry, 'get'> {
  if (!program || module.startsWith('core.')) return registry;
  const mod = serviceModule(module, program, cacheDir);
  return { get: (name) => (name === module ? mod : registry.get(name)) };
}
