/**
 * soul-lint's view of a service: load it from a directory and return every
 * finding. The checks are the ones render runs first, so a service that
 * lints clean fails render only on values known at run time (inputs, host
 * facts, state).
 */
import type { RenderError } from './errors';
import { loadServiceFromDir } from './load/dir';

export interface Finding extends RenderError {
  severity: 'error' | 'warning';
}

export function lintService(dir: string): Finding[] {
  return loadServiceFromDir(dir).errors.map((e) => ({ ...e, severity: 'error' as const }));
}
