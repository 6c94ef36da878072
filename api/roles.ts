// Built-in roles and the permission grammar `<resource>:<action>` with `*` wildcards (ARCHITECTURE 3).
// A role is a name for a list of permissions; the archons table stores the role name, so changing a
// role's list here changes what every operator holding it may do at the next request.
export const AID_PATTERN = /^[a-z0-9][a-z0-9._@-]{1,127}$/;
export const CLUSTER_ADMIN = 'cluster-admin';

/** `*`, `<resource>:*`, `*:<action>` or `<resource>:<action>`; resources and actions are kebab-case. */
export const PERMISSION_PATTERN = /^(\*|(\*|[a-z][a-z-]*):(\*|[a-z][a-z-]*))$/;

export const ROLES: Record<string, readonly string[]> = {
  [CLUSTER_ADMIN]: ['*'],
  // Every reader holds `overview:read` (GET /v1/overview sums up souls, incarnations and runs together).
  // The activity stream names operators and their addresses: operators read it, viewers do not.
  operator: [
    'souls:*',
    'services:*',
    'incarnations:*',
    // Approving a run waiting at a gate between batches (docs/runs.md "Gates between batches").
    'runs:approve',
    'archons:read',
    'activity:read',
    'executions:read',
    'overview:read',
  ],
  viewer: ['souls:read', 'services:read', 'incarnations:read', 'archons:read', 'executions:read', 'overview:read'],
  // One-off executions (docs/executions.md) act on hosts outside any incarnation: `executions:run`
  // is held by cluster-admin and by this role only, never by operator by default.
  responder: ['souls:*', 'services:read', 'incarnations:read', 'archons:read', 'executions:*', 'overview:read'],
};

/**
 * Which core modules a role may run as a one-off execution (docs/executions.md): a role absent here
 * may run none, whatever its permissions. A responder restarts and inspects, but runs no arbitrary command.
 */
export const EXECUTION_MODULES: Record<string, readonly string[]> = {
  [CLUSTER_ADMIN]: ['*'],
  responder: [
    'core.service.restarted',
    'core.service.reloaded',
    'core.service.running',
    'core.service.stopped',
    'core.pkg.installed',
    'core.file.present',
  ],
};

/** The role's allow-list: the keeper config's `executions.modules` for a role it names, else the built-in one. */
export function executionModulesOf(
  role: string,
  configured: Readonly<Record<string, readonly string[]>> = {},
): readonly string[] {
  const own = Object.prototype.hasOwnProperty;
  if (own.call(configured, role)) return configured[role]!;
  return own.call(EXECUTION_MODULES, role) ? EXECUTION_MODULES[role]! : [];
}

/**
 * Removing an incarnation's record without running its `destroy` (DELETE ...?force=true) leaves its
 * hosts configured and unmanaged: a permission of its own beside `incarnations:delete`, held only
 * where a role grants it (cluster-admin's `*`, operator's `incarnations:*`), never by viewers.
 */
export const FORCE_DELETE_INCARNATION = 'incarnations:force-delete';

export const ROLE_NAMES: readonly string[] = Object.keys(ROLES);

/** The permissions of a role; an unknown role (e.g. one removed from this table) grants nothing. */
export function permissionsOf(role: string): readonly string[] {
  return Object.prototype.hasOwnProperty.call(ROLES, role) ? ROLES[role] : [];
}

/** True when any of the granted permissions covers `needed` (e.g. `souls:*` covers `souls:create`). */
export function permits(granted: readonly string[], needed: string): boolean {
  const [res, act] = needed.split(':');
  return granted.some((g) => {
    if (g === '*') return true;
    const [gr, ga] = g.split(':');
    return (gr === '*' || gr === res) && (ga === '*' || ga === act);
  });
}
