// Built-in roles and the permission grammar `<resource>:<action>` with `*` wildcards (ARCHITECTURE 3).
export const AID_PATTERN = /^[a-z0-9][a-z0-9._@-]{1,127}$/;
export const CLUSTER_ADMIN = 'cluster-admin';

export const ROLES: Record<string, readonly string[]> = {
  [CLUSTER_ADMIN]: ['*'],
  operator: ['souls:*', 'services:*', 'incarnations:*', 'archons:read'],
  viewer: ['souls:read', 'services:read', 'incarnations:read', 'archons:read'],
};

/** True when any of the granted permissions covers `needed` (e.g. `souls:*` covers `souls:create`). */
export function permits(granted: readonly string[], needed: string): boolean {
  const [res, act] = needed.split(':');
  return granted.some((g) => {
    if (g === '*') return true;
    const [gr, ga] = g.split(':');
    return (gr === '*' || gr === res) && (ga === '*' || ga === act);
  });
}
