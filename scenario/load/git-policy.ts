// Which git repositories the keeper may clone (issue 13, item 7): an allow-list of schemes and
// hosts from the keeper's config (services.git). Checked at registration (the API's 400) and again
// before every clone or fetch, so a row written before the policy changed cannot reach past it.
// Credentials never ride in the URL: a service names a `credential_ref` instead (issue 12, item 5).
import { parseReference } from '../../common/secret';

export type GitScheme = 'https' | 'http' | 'ssh' | 'git' | 'file';
export const GIT_SCHEMES: readonly GitScheme[] = ['https', 'http', 'ssh', 'git', 'file'];

export interface GitPolicy {
  /** Schemes a service's URL may use; `file` (a path on the keeper's own disk) only when listed. */
  schemes: readonly string[];
  /** Host names (`git.example.com`), suffix patterns (`*.example.com`) or `*` for any host. */
  hosts: readonly string[];
  /** A clone or fetch growing the mirror past this is stopped and its mirror removed. */
  maxRepoBytes: number;
  /** A clone or fetch taking longer is stopped. */
  timeoutMs: number;
  /**
   * Whether a `file://` path is on storage every keeper of the cluster sees. Any keeper may render any
   * run, so a path only one keeper sees locks the runs the others render (issue 33).
   */
  fileShared?: boolean;
}

export interface ParsedGitUrl {
  scheme: string;
  host: string;
  username: string;
  password: string;
}

/** Reads the scheme, host and any user info of a git URL as git itself would route it. */
export function parseGitUrl(url: string): ParsedGitUrl | undefined {
  // `<transport>::<address>` runs a remote helper (ext:: runs a command): its own "scheme".
  const helper = /^([A-Za-z][A-Za-z0-9+.-]*)::/.exec(url);
  if (helper) return { scheme: helper[1].toLowerCase(), host: '', username: '', password: '' };
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url)?.[1]?.toLowerCase();
  if (scheme) {
    if (scheme === 'file') return { scheme, host: '', username: '', password: '' };
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return undefined;
    }
    return {
      scheme,
      host: u.hostname.replace(/^\[|\]$/g, '').toLowerCase(),
      username: decodeURIComponent(u.username),
      password: decodeURIComponent(u.password),
    };
  }
  // scp-like `[user@]host:path` (git's rule: a colon before any slash); anything else is a local path.
  const scp = /^(?:([^@/:]+)@)?([^@/:]+):(?!\/\/)/.exec(url);
  if (scp)
    return { scheme: 'ssh', host: scp[2].replace(/^\[|\]$/g, '').toLowerCase(), username: scp[1] ?? '', password: '' };
  return { scheme: 'file', host: '', username: '', password: '' };
}

function hostAllowed(host: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => {
    const pat = p.toLowerCase();
    if (pat === '*') return true;
    if (pat.startsWith('*.')) return host.endsWith(pat.slice(1)) && host.length > pat.length - 1;
    return host === pat;
  });
}

/**
 * Undefined when the policy admits the URL, else the reason (safe to show: it names the rule and
 * the config key, never anything fetched). `withCredential`: the service names a credential_ref.
 */
export function gitUrlRefusal(
  url: string,
  policy: Pick<GitPolicy, 'schemes' | 'hosts'>,
  withCredential = false,
): string | undefined {
  const p = parseGitUrl(url);
  if (!p) return 'is not a URL git can use';
  if (p.password || (p.username && p.scheme !== 'ssh')) {
    return 'must not carry credentials (user:password@ or a token in the URL): store the credential in the secrets store and name it with credential_ref: "secretstore:<path>#<field>"';
  }
  if (!policy.schemes.includes(p.scheme)) {
    const allowed = policy.schemes.length > 0 ? policy.schemes.join(', ') : 'none';
    return `uses the scheme "${p.scheme}", which this keeper does not allow (services.git.schemes: ${allowed})`;
  }
  if (p.scheme !== 'file' && !hostAllowed(p.host, policy.hosts)) {
    return `names the host "${p.host}", which is not in this keeper's allow-list (services.git.hosts)`;
  }
  if (withCredential) {
    if (p.scheme !== 'https' && p.scheme !== 'http')
      return `cannot use a credential_ref with the scheme "${p.scheme}": credentials are handed to git for https (and http to a loopback host) only`;
    if (p.scheme === 'http' && !isLoopback(p.host))
      return 'sends its credential over plain http: use https (plain http only to a loopback host)';
  }
  return undefined;
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(?:\.\d{1,3}){3}$/.test(host);
}

/** `secretstore:<path>#<field>`: where a service's git credential lives. */
export const CREDENTIAL_REF_PATTERN = '^secretstore:[A-Za-z0-9_./-]+#[A-Za-z0-9_.-]+$';

/** Split by the one reader of `secretstore:<path>#<field>` (common/secret.ts); the path keeps its
 *  `secretstore:` prefix, the form the secrets client resolves. */
export function splitCredentialRef(ref: string): { path: string; field: string } {
  const r = parseReference(ref);
  if (!r) throw new Error('credential_ref must be secretstore:<path>#<field>');
  return { path: `secretstore:${r.path}`, field: r.field };
}

/**
 * The URL as it may be shown: user info dropped. New services cannot carry credentials, but a row
 * registered before the rule existed may, and it must not reach an answer or a run report.
 */
export function displayGitUrl(url: string): string {
  return url.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^/@]*@/, '$1');
}
