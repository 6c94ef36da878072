// Provisioning helpers for tests, with the stack's root token (never the keeper's AppRole).
import fs from 'node:fs';
import { stackEnv, stackFile } from './stack-env';

async function call(method: string, p: string, body?: unknown): Promise<any> {
  const env = stackEnv();
  const res = await fetch(`${env.SECRETSTORE_ADDR}/v1/${p}`, {
    method,
    headers: { 'X-Vault-Token': env.SECRETSTORE_ROOT_TOKEN, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p}: HTTP ${res.status} ${text.slice(0, 200)}`);
  return text ? JSON.parse(text) : {};
}

/** Writes a secret on the KV v2 mount `secret/` or the KV v1 mount `kv1/`; returns its reference. */
export async function putSecret(
  mount: 'secret' | 'kv1',
  name: string,
  fields: Record<string, string>,
): Promise<string> {
  if (mount === 'secret') await call('POST', `secret/data/${name}`, { data: fields });
  else await call('POST', `kv1/${name}`, fields);
  return `secretstore:${mount}/${name}`;
}

export async function deleteSecret(mount: 'secret' | 'kv1', name: string): Promise<void> {
  if (mount === 'secret') await call('DELETE', `secret/metadata/${name}`);
  else await call('DELETE', `kv1/${name}`);
}

export { call as secretStoreCall };

/** The stack's scenario role as a keeper.yml `secretstore.scenario_auth` block. */
export const SCENARIO_AUTH = () => ({
  method: 'approle' as const,
  role_id: 'keeper-scenario',
  secret_id_file: stackFile('approle-scenario-secret-id'),
});

/** Logs in as an AppRole and returns its token (for asking the store directly what that token may do). */
export async function appRoleToken(roleId: string, secretIdFile: string): Promise<string> {
  const res = await fetch(`${stackEnv().SECRETSTORE_ADDR}/v1/auth/approle/login`, {
    method: 'POST',
    body: JSON.stringify({ role_id: roleId, secret_id: fs.readFileSync(secretIdFile, 'utf8').trim() }),
  });
  if (!res.ok) throw new Error(`AppRole login as ${roleId}: HTTP ${res.status}`);
  return ((await res.json()) as { auth: { client_token: string } }).auth.client_token;
}
