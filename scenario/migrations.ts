/**
 * State migrations: `migrations/<version>.yml` holds `state_changes.sets`
 * whose expressions read `state.*` (the state as migrated so far). Applied
 * in order from the current version to the target, forward only; the
 * keeper commits the result in one transaction.
 */
import { makeError, ScenarioError, type RenderError } from './errors';
import type { LoadedService } from './model';
import { toCel } from './cel/values';
import { resolveNode } from './render/resolve';
import { setPath } from './render/targets';

export type MigrationResult =
  | { ok: true; state: Record<string, unknown>; applied: number[] }
  | { ok: false; errors: RenderError[] };

export function applyMigrations(
  service: LoadedService,
  state: Record<string, unknown>,
  fromVersion: number,
  toVersion: number,
): MigrationResult {
  const at = { file: 'service.yml', line: 1, col: 1 };
  if (service.errors.length > 0) return { ok: false, errors: service.errors };
  if (!Number.isInteger(fromVersion) || !Number.isInteger(toVersion) || fromVersion < 1) {
    return {
      ok: false,
      errors: [
        makeError(at, 'SL018', `invalid migration range ${fromVersion} -> ${toVersion}`, 'use integer versions from 1'),
      ],
    };
  }
  if (toVersion < fromVersion) {
    return {
      ok: false,
      errors: [
        makeError(
          at,
          'SL018',
          `migrations are forward only: cannot go from ${fromVersion} down to ${toVersion}`,
          'pick a target at or above the current version',
        ),
      ],
    };
  }
  if (toVersion > service.stateSchemaVersion) {
    return {
      ok: false,
      errors: [
        makeError(
          at,
          'SL018',
          `target version ${toVersion} is above the service's state_schema_version ${service.stateSchemaVersion}`,
          'upgrade to a version the service declares',
        ),
      ],
    };
  }
  let current = { ...state };
  const applied: number[] = [];
  for (let v = fromVersion + 1; v <= toVersion; v++) {
    const m = service.migrations.get(v);
    if (!m)
      return {
        ok: false,
        errors: [makeError(at, 'SL006', `migrations/${v}.yml is missing`, `add migrations/${v}.yml`)],
      };
    const env = {
      scope: { inputs: new Map(), soulprint: false, state: true, registered: [], result: false },
      celContext: { input: {}, state: toCel(current) },
      label: `in migration ${v}: `,
    };
    try {
      // All sets of one migration read the state as it was before that migration.
      let next = current;
      for (const s of m.stateSets) next = setPath(next, s.key, resolveNode(s.node, env));
      current = next;
    } catch (e) {
      if (e instanceof ScenarioError) return { ok: false, errors: [e.toRenderError()] };
      throw e;
    }
    applied.push(v);
  }
  return { ok: true, state: current, applied };
}
