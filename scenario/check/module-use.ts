/**
 * How a task uses a core module, beyond its parameter schema (SL027): rules a schema cannot say.
 * - core.service.restarted / reloaded act every time they run: the task needs a trigger
 *   (`onchanges:`, or a `when:`), else it restarts the service on every run.
 * - core.cmd.run with `shell: true` takes one string, the shell command.
 * - core.pkg.installed: `version` pins one package, not a list.
 * - core.file.absent / core.dir.absent never remove `/` or a system folder (the soul refuses too).
 * - a file module's `validate` runs its program on the candidate file; a shell (`sh -c ...`) there
 *   runs anything as root before the file is in place: name the checking program itself.
 * Values that are `${...}` are only known at render and are not judged here.
 */
import * as path from 'node:path';
import { makeError, type RenderError } from '../errors';
import type { Task } from '../model';
import { TRIGGERED_MODULES } from '../modules';
import { PROTECTED_FOLDERS } from '../modules/protected-folders';
import { pair } from '../yaml/node';

export const RULE = 'SL027';

const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'busybox']);

export function checkModuleUse(t: Task, statics: Record<string, unknown>): RenderError[] {
  const out: RenderError[] = [];
  const at = (param: string) => pair(t.params, param)?.value.pos ?? t.params?.pos ?? t.pos;
  if (TRIGGERED_MODULES.has(t.module) && t.onchanges.length === 0 && !t.when) {
    out.push(
      makeError(
        t.modulePos,
        RULE,
        `${t.module} acts every time it runs, and this task has no trigger`,
        'add `onchanges: [<the task that changes its configuration>]` (or a `when:`), or use core.service.running',
      ),
    );
  }
  const argv = statics['argv'];
  if (t.module === 'core.cmd.run' && statics['shell'] === true && Array.isArray(argv) && argv.length !== 1) {
    out.push(
      makeError(
        at('argv'),
        RULE,
        'core.cmd.run with `shell: true` takes the shell command as one string in `argv`',
        'write `argv: ["the command line"]`, or drop `shell: true` and list the arguments',
      ),
    );
  }
  if (t.module === 'core.pkg.installed' && Array.isArray(statics['name']) && statics['version'] !== undefined) {
    out.push(
      makeError(
        at('version'),
        RULE,
        'core.pkg.installed: `version` pins one package, but `name` is a list',
        'give one name with `version`, or one task per pinned package',
      ),
    );
  }
  if (
    (t.module === 'core.file.absent' || t.module === 'core.dir.absent') &&
    typeof statics['path'] === 'string' &&
    PROTECTED_FOLDERS.has(path.posix.normalize(statics['path']).replace(/(.)\/$/, '$1'))
  ) {
    out.push(
      makeError(
        at('path'),
        RULE,
        `${t.module} would remove ${statics['path']}, a system folder or the soul's own (the soul refuses it)`,
        'name the file or folder this service made',
      ),
    );
  }
  const validate = statics['validate'];
  if (
    Array.isArray(validate) &&
    typeof validate[0] === 'string' &&
    SHELLS.has(path.posix.basename(validate[0])) &&
    validate.includes('-c')
  ) {
    out.push(
      makeError(
        at('validate'),
        RULE,
        '`validate` runs a shell: any command runs as root before the file is in place',
        'name the checking program itself, e.g. [nginx, -t, -c, "%s"]; run other commands with core.cmd.run',
      ),
    );
  }
  return out;
}
