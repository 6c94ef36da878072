// Owner and group names for file states, resolved from the local account files. Numeric ids are
// taken as they are. Names known only to NSS (LDAP, sssd) are not resolved here: give the number.
import { promises as fs } from 'node:fs';
import type { AccountFiles } from './types';

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
