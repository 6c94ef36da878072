// Owner and group names for file states, resolved from the local account files. Numeric ids are
// taken as they are. Names known only to NSS (LDAP, sssd) are not resolved here: give the number.
import { promises as fs } from 'node:fs';
import { afterInstall, decideAtApply, pendingInstall } from './pending';
import type { AccountFiles, StateContext } from './types';

export const SYSTEM_ACCOUNT_FILES: AccountFiles = { passwd: '/etc/passwd', group: '/etc/group' };

async function lookup(file: string, name: string, kind: 'user' | 'group'): Promise<number> {
  if (/^[0-9]+$/.test(name)) return Number(name);
  const text = await fs.readFile(file, 'utf8');
  for (const line of text.split('\n')) {
    const fields = line.split(':');
    if (fields[0] === name && fields.length >= 3 && /^[0-9]+$/.test(fields[2] ?? '')) return Number(fields[2]);
  }
  throw new Error(
    `unknown ${kind} ${JSON.stringify(name)} (not in ${file}; give a numeric id for directory-service accounts)`,
  );
}

export function resolveUser(name: string, files: AccountFiles = SYSTEM_ACCOUNT_FILES): Promise<number> {
  return lookup(files.passwd, name, 'user');
}

export function resolveGroup(name: string, files: AccountFiles = SYSTEM_ACCOUNT_FILES): Promise<number> {
  return lookup(files.group, name, 'group');
}

/**
 * The uid and gid a step's `owner` and `group` name. In a plan, an account an earlier step of the
 * same plan would create does not exist yet: its id is -1, so a file or folder owned by a new
 * service user plans on a fresh host. A user's own group counts: core.user.present makes one of
 * its name (useradd --user-group) unless it names another. An account unknown after an earlier
 * step that would install a package is taken as one the package creates (postgres by postgresql-15):
 * -1 too, and the step says it is decided at apply.
 */
export async function resolveOwnership(
  want: { owner?: string; group?: string },
  ctx: Pick<StateContext, 'dryRun' | 'earlier' | 'decided'>,
  files: AccountFiles = SYSTEM_ACCOUNT_FILES,
): Promise<{ uid?: number; gid?: number }> {
  const planned = (modules: string[], name: string) =>
    ctx.dryRun && (ctx.earlier ?? []).some((e) => modules.includes(e.module) && e.changed && e.names.includes(name));
  const byPackage = (kind: 'user' | 'group', name: string, e: unknown): number | Promise<never> => {
    const pkg = pendingInstall(ctx);
    if (!pkg) return Promise.reject(e);
    decideAtApply(ctx, `${kind} ${JSON.stringify(name)} is not on this host yet: ${afterInstall(pkg)}`);
    return -1;
  };
  const out: { uid?: number; gid?: number } = {};
  if (want.owner !== undefined) {
    const name = want.owner;
    out.uid = await resolveUser(name, files).catch((e) =>
      planned(['core.user.present'], name) ? -1 : byPackage('user', name, e),
    );
  }
  if (want.group !== undefined) {
    const name = want.group;
    out.gid = await resolveGroup(name, files).catch((e) =>
      planned(['core.group.present', 'core.user.present'], name) ? -1 : byPackage('group', name, e),
    );
  }
  return out;
}
