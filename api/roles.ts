// Built-in roles and the permission grammar `<resource>:<action>` with `*` wildcards (ARCHITECTURE 3).
// A role is a name for a list of permissions; the archons table stores the role name, so changing a
// role's list here changes what every operator holding it may do at the next request.
export const AID_PATTERN = /^[a-z0-9][a-z0-9._@-]{1,127}$/;
export const CLUSTER_ADMIN = 'cluster-admin';

/** `*`, `<resource>:*`, `*:<action>` or `<resource>:<action>`; resources and actions are kebab-case. */
export const PERMISSION_PATTERN = /^(\*|(\*|[a-z][a-z-]*):(\*|[a-z][a-z-]*))$/;

export const ROLES: Record<string, readonly string[]> = {
  [CLUSTER_ADMIN]: ['*'],
  // The activity stream names operators and their addresses: operators read it, viewers do not.
  operator: ['souls:*', 'services:*', 'incarnations:*', 'archons:read', 'activity:read'],
  viewer: ['souls:read', 'services:read', 'incarnations:read', 'archons:read'],
};

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
