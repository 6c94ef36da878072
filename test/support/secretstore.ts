// Provisioning helpers for tests, with the stack's root token (never the keeper's AppRole).
import { stackEnv } from './stack-env';

async function call(method: string, p: string, body?: unknown): Promise<any> {
  const env = stackEnv();
  const res = await fetch(`${env.SECRETSTORE_ADDR}/v1/${p}`, {
    method, headers: { 'X-Vault-Token': env.SECRETSTORE_ROOT_TOKEN, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p}: HTTP ${res.status} ${text.slice(0, 200)}`);
  return text ? JSON.parse(text) : {};
}

/** Writes a secret on the KV v2 mount `secret/` or the KV v1 mount `kv1/`; returns its reference. */
export async function putSecret(mount: 'secret' | 'kv1', name: string, fields: Record<string, string>): Promise<string> {
  if (mount === 'secret') await call('POST', `secret/data/${name}`, { data: fields });
  else await call('POST', `kv1/${name}`, fields);
  return `secretstore:${mount}/${name}`;
}

export async function deleteSecret(mount: 'secret' | 'kv1', name: string): Promise<void> {
  if (mount === 'secret') await call('DELETE', `secret/metadata/${name}`);
  else await call('DELETE', `kv1/${name}`);
}

export { call as secretStoreCall };
