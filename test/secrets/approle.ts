// AppRoles of the test's own on the stack's secrets store, with exactly the policies that
// scripts/provision-secretstore.js provisions (so the tests check those policies, and the shared
// store's own `keeper` and `keeper-scenario` roles are left as they are). Uses the stack's root
// token, as provisioning does.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../support/repo';
import { secretStoreCall } from '../support/secretstore';

export interface TestAppRole {
  roleId: string;
  secretIdFile: string;
  remove(): Promise<void>;
}

export async function createKeeperAppRole(dir: string): Promise<TestAppRole> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { POLICY } = require(path.join(repoRoot(), 'scripts', 'provision-secretstore.js')) as { POLICY: string };
  return createRole(dir, `keeper-t12-${randomBytes(4).toString('hex')}`, POLICY);
}

async function createRole(dir: string, name: string, policy: string): Promise<TestAppRole> {
  await secretStoreCall('PUT', `sys/policies/acl/${name}`, { policy });
  await secretStoreCall('POST', `auth/approle/role/${name}`, {
    token_policies: [name],
    token_ttl: '1h',
    token_max_ttl: '24h',
    token_type: 'service',
  });
  await secretStoreCall('POST', `auth/approle/role/${name}/role-id`, { role_id: name });
  const secretId = (await secretStoreCall('POST', `auth/approle/role/${name}/secret-id`, {})).data.secret_id as string;
  const secretIdFile = path.join(dir, `${name}.secret-id`);
  fs.writeFileSync(secretIdFile, `${secretId}\n`, { mode: 0o400 });
  return {
    roleId: name,
    secretIdFile,
    async remove() {
      await secretStoreCall('DELETE', `auth/approle/role/${name}`).catch(() => undefined);
      await secretStoreCall('DELETE', `sys/policies/acl/${name}`).catch(() => undefined);
    },
  };
}

/**
 * A scenario role of the test's own (issue 28): exactly the policy scripts/provision-secretstore.js
 * gives `keeper-scenario`, for `prefixes` (each ending in `/`; `secret/` is KV v2, `kv1/` KV v1).
 */
export async function createScenarioAppRole(dir: string, prefixes: string[]): Promise<TestAppRole> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { scenarioPolicy } = require(path.join(repoRoot(), 'scripts', 'provision-secretstore.js')) as {
    scenarioPolicy(p: string[]): string;
  };
  return createRole(dir, `scenario-t28-${randomBytes(4).toString('hex')}`, scenarioPolicy(prefixes));
}

/** Points a keeper.yml document at the role. */
export function useAppRole(doc: Record<string, any>, role: TestAppRole): void {
  doc.secretstore.auth = { method: 'approle', role_id: role.roleId, secret_id_file: role.secretIdFile };
}

/** Points a keeper.yml document's scenario side at the role and the prefix it may read. */
export function useScenarioRole(doc: Record<string, any>, role: TestAppRole, prefix: string): void {
  doc.secretstore.scenario_auth = { method: 'approle', role_id: role.roleId, secret_id_file: role.secretIdFile };
  doc.secretstore.scenario_prefix = prefix;
}
