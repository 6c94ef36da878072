/**
 * State migrations: `migrations/<version>.yml` holds `state_changes` with
 * `moves` (rename keys), `unsets` (drop keys) and `sets` (expressions reading
 * `state.*`, the state as the previous migration left it). Within one
 * migration every part reads that same state, and they are applied in that
 * order: moves, unsets, sets. Migrations run in order from the current
 * version to the target, forward only; the keeper commits the result in one
 * transaction.
 */
import { makeError, ScenarioError, type RenderError } from './errors';
import type { LoadedService } from './model';
import { toCel } from './cel/values';
import { resolveNode } from './render/resolve';
import { setPath } from './render/targets';
import { getPath, unsetPath } from './state-paths';

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
      // Every part of one migration reads the state as it was before that migration.
      let next = current;
      for (const mv of m.moves) {
        const found = getPath(current, mv.from.key);
        next = unsetPath(next, mv.from.key);
        // A key that is not there moves nothing: the migration also runs on states that never had it.
        if (found.present) next = setPath(next, mv.to.key, found.value);
      }
      for (const u of m.unsets) next = unsetPath(next, u.key);
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
