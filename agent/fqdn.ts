// The SID is the host's FQDN (ARCHITECTURE 4): the hostname when it has a dot, else the canonical
// name the resolver gives (what `hostname -f` prints). A short name is refused: the PKI issues
// certificates only for names in its allowed domain. No flag bypasses this.
import os from 'node:os';
import { notFqdn } from './errors';

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

export function isFqdn(name: string): boolean {
  const labels = name.split('.');
  return name.length <= 253 && labels.length >= 2 && labels.every((l) => LABEL.test(l));
}

function normalize(name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, '');
}

function resolverName(): Promise<string | undefined> {
  // Required here: most hosts' names carry their domain, and loading child_process is 14 ms of
  // every soul's start.
  const { execFile } = require('node:child_process') as typeof import('node:child_process');
  return new Promise((resolve) => {
    execFile('hostname', ['-f'], { timeout: 3000 }, (err, stdout) => resolve(err ? undefined : normalize(stdout)));
  });
}

/** The host's FQDN, or SoulError "not a fully-qualified domain name". `hostname` is injectable for tests. */
export async function findFqdn(hostname = os.hostname(), resolve = resolverName): Promise<string> {
  const own = normalize(hostname);
  if (own.includes('.')) {
    if (!isFqdn(own)) throw notFqdn(own);
    return own;
  }
  const canonical = await resolve();
  if (canonical && canonical.includes('.') && isFqdn(canonical)) return canonical;
  throw notFqdn(own);
}
