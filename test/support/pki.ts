// PKI roles of their own for the certificate tests (short lifetimes, roles an operator got wrong),
// made with the stack's root token under the stack's PKI root, and a secrets-store token for the
// keeper that may sign and issue with them (the stack's AppRole may use the `soul` role only).
import { randomBytes } from 'node:crypto';
import { secretStoreCall } from './secretstore';

const TEST_POLICY = 'keeper-test-pki';

/** What the stack's `soul` role is (scripts/provision-secretstore.js), with `over` applied. */
export function soulRoleParams(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    allowed_domains: ['keeper.test', 'localhost'],
    allow_subdomains: true,
    allow_bare_domains: true,
    max_ttl: '720h',
    ttl: '720h',
    key_type: 'any',
    use_csr_common_name: false,
    use_csr_sans: false,
    allow_ip_sans: false,
    enforce_hostnames: true,
    require_cn: true,
    server_flag: false,
    client_flag: true,
    // The PKI backdates certificates by 30 s by default; with lifetimes of seconds that would be
    // most of the lifetime.
    not_before_duration: '1s',
    ...over,
  };
}

export function serverRoleParams(over: Record<string, unknown> = {}): Record<string, unknown> {
  return soulRoleParams({
    key_type: 'ec',
    key_bits: 256,
    server_flag: true,
    client_flag: false,
    allow_ip_sans: true,
    ...over,
  });
}

/** Creates (or rewrites) pki/roles/<name>; names start with t- so the test policy covers them. */
export async function putRole(name: string, params: Record<string, unknown>): Promise<void> {
  await secretStoreCall('POST', `pki/roles/${name}`, params);
}

export async function deleteRole(name: string): Promise<void> {
  await secretStoreCall('DELETE', `pki/roles/${name}`).catch(() => undefined);
}

export function roleName(what: string): string {
  return `t-${what}-${randomBytes(3).toString('hex')}`;
}

/** A token with the keeper's policy plus signing and issuing on the t-* roles. */
export async function keeperToken(): Promise<string> {
  await secretStoreCall('PUT', `sys/policies/acl/${TEST_POLICY}`, {
    policy:
      'path "pki/sign/t-*" { capabilities = ["create", "update"] }\npath "pki/issue/t-*" { capabilities = ["create", "update"] }\n',
  });
  const res = await secretStoreCall('POST', 'auth/token/create', {
    policies: ['keeper', TEST_POLICY],
    ttl: '2h',
    renewable: false,
  });
  return res.auth.client_token as string;
}

/** Issues a certificate from a role with the root token (a leaf to start a keeper with). */
export async function issue(
  role: string,
  body: Record<string, unknown>,
): Promise<{ certificate: string; private_key: string; serial_number: string }> {
  return (await secretStoreCall('POST', `pki/issue/${role}`, body)).data;
}

/** Points a test keeper's config (prepareKeeperConfig's `mutate`) at `token` and the given soul role. */
export function useToken(doc: Record<string, any>, token: string, soulRole?: string, soulTtl?: string): void {
  delete doc.secretstore.auth;
  doc.secretstore.token = token;
  if (soulRole) doc.secretstore.pki_role = soulRole;
  if (soulTtl) doc.secretstore.soul_cert_ttl = soulTtl;
}
