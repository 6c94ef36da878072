#!/usr/bin/env node
// Provisions the dev secrets/PKI store the way an operator would in production (interface spec 4.6):
// KV secrets (dsn, password, signing_key) on a KV v2 mount and a KV v1 mount, a PKI root and roles,
// the keeper's server leaf as three files, and two AppRoles with narrow policies whose secret_ids
// are written mode 0400: `keeper` (its own secrets, the PKI) and `keeper-scenario` (scenario
// secrets and credential_refs only, issue 28). Idempotent: run after every start of the in-memory
// dev store, and again on a store already provisioned.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

// Also required by tests for the policy text (module.exports below); only the command provisions.
const isMain = require.main === module;
const state = process.argv[2];
if (isMain && !state) { console.error('usage: provision-secretstore.js <stack-dir>'); process.exit(2); }
const env = isMain ? Object.fromEntries(fs.readFileSync(path.join(state, 'generated.env'), 'utf8')
  .split('\n').filter(Boolean).map((l) => { const i = l.indexOf('='); return [l.slice(0, i), l.slice(i + 1)]; })) : {};
// The production rehearsal (scripts/prod-rehearsal.sh) provisions its own store, in server mode, the
// same way: another address and database, everything else as here.
const ADDR = process.env.KEEPER_PROVISION_ADDR || 'http://127.0.0.1:8200';
const DB_NAME = process.env.KEEPER_PROVISION_DB || 'keeper';
const TOKEN = env.BAO_ROOT_TOKEN;

// Names an operator would choose; docs/stack.md explains each.
const PKI_MOUNT = 'pki';
const SOUL_ROLE = 'soul';
const SERVER_ROLE = 'keeper-server';
const ALLOWED_DOMAINS = ['keeper.test', 'localhost'];
const SERVER_NAMES = { common_name: 'keeper.keeper.test', alt_names: 'localhost', ip_sans: '127.0.0.1' };

async function api(method, p, body, { allow404 = false } = {}) {
  const res = await fetch(`${ADDR}/v1/${p}`, {
    method,
    headers: { 'X-Vault-Token': TOKEN, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (allow404 && res.status === 404) return null;
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p}: HTTP ${res.status}: ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : {};
}

async function ensureMount(mountPath, type, options) {
  const mounts = (await api('GET', 'sys/mounts')).data;
  if (mounts[`${mountPath}/`]) return;
  await api('POST', `sys/mounts/${mountPath}`, { type, options });
}

function writeFileMode(file, content, mode) {
  const tmp = `${file}.tmp-${process.pid}`;
  fs.rmSync(tmp, { force: true });
  fs.writeFileSync(tmp, content, { mode });
  fs.chmodSync(tmp, mode);
  fs.renameSync(tmp, file);
}

async function provisionKv() {
  const dsn = `postgres://keeper:${env.PG_PASSWORD}@127.0.0.1:5432/${DB_NAME}`;
  const fields = { dsn, password: env.REDIS_PASSWORD, signing_key: env.SIGNING_KEY };
  await ensureMount('secret', 'kv', { version: '2' });
  await api('POST', 'secret/data/keeper', { data: fields });
  // A KV v1 mount with the same secret: the keeper detects the version of whichever it is pointed at.
  await ensureMount('kv1', 'kv', { version: '1' });
  await api('POST', 'kv1/keeper', fields);
}

async function provisionPki() {
  await ensureMount(PKI_MOUNT, 'pki');
  await api('POST', `sys/mounts/${PKI_MOUNT}/tune`, { max_lease_ttl: '87600h' });
  const ca = await fetch(`${ADDR}/v1/${PKI_MOUNT}/ca/pem`).then((r) => (r.ok ? r.text() : ''));
  if (!ca.includes('BEGIN CERTIFICATE')) {
    // The dev store is in memory, but a PKI root must outlive it, as it does in production: every
    // onboarded soul's identity chains to it. Generated once (exported), kept in the stack folder
    // with mode 0600, and imported into every fresh store.
    const bundleFile = path.join(state, 'pki-root-bundle.pem');
    if (fs.existsSync(bundleFile)) {
      await api('POST', `${PKI_MOUNT}/config/ca`, { pem_bundle: fs.readFileSync(bundleFile, 'utf8') });
    } else {
      const root = (await api('POST', `${PKI_MOUNT}/root/generate/exported`, {
        common_name: 'Keeper Root CA', ttl: '87600h', key_type: 'ec', key_bits: 256,
      })).data;
      writeFileMode(bundleFile, `${root.private_key}\n${root.certificate}\n`, 0o600);
    }
  }
  const common = {
    allowed_domains: ALLOWED_DOMAINS, allow_subdomains: true, allow_bare_domains: true,
    max_ttl: '720h', ttl: '720h', key_type: 'any',
    // Names come from the request (the host record), never from what a CSR asks for.
    use_csr_common_name: false, use_csr_sans: false,
    allow_ip_sans: true, enforce_hostnames: true, require_cn: true, no_store: false,
  };
  // A role fixes the extended key usage, so the soul role is client-auth only and the server leaf
  // comes from a sibling role under the same root (docs/stack.md).
  await api('POST', `${PKI_MOUNT}/roles/${SOUL_ROLE}`, { ...common, server_flag: false, client_flag: true, allow_ip_sans: false });
  // The server role issues (generates the key itself), which needs a concrete key type.
  await api('POST', `${PKI_MOUNT}/roles/${SERVER_ROLE}`, { ...common, key_type: 'ec', key_bits: 256, server_flag: true, client_flag: false });
}

async function provisionServerLeaf() {
  const tls = path.join(state, 'tls');
  fs.mkdirSync(tls, { recursive: true });
  const caPem = await fetch(`${ADDR}/v1/${PKI_MOUNT}/ca/pem`).then((r) => r.text());
  const certFile = path.join(tls, 'keeper.crt');
  const caFile = path.join(tls, 'ca.pem');
  const sameRoot = fs.existsSync(caFile) && fs.readFileSync(caFile, 'utf8').trim() === caPem.trim();
  if (sameRoot && fs.existsSync(certFile)) {
    const { X509Certificate } = require('node:crypto');
    const cert = new X509Certificate(fs.readFileSync(certFile));
    const remainingMs = Date.parse(cert.validTo) - Date.now();
    if (remainingMs > 7 * 24 * 3600 * 1000) return;
  }
  const issued = (await api('POST', `${PKI_MOUNT}/issue/${SERVER_ROLE}`, { ...SERVER_NAMES, ttl: '720h' })).data;
  writeFileMode(path.join(tls, 'keeper.key'), issued.private_key + '\n', 0o600);
  writeFileMode(certFile, issued.certificate + '\n', 0o644);
  writeFileMode(caFile, caPem.trim() + '\n', 0o644);
}

// Scenario secrets (docs/secrets.md): the keeper's secretstore.scenario_prefix, on the KV v2 mount
// `secret/` and the KV v1 mount `kv1/`. Scenarios, services' and SSH souls' credential_refs read
// below it; the keeper writes the values given to secret inputs below `<prefix>incarnations/`.
const SCENARIO_PREFIXES = ['secret/keeper/services/', 'kv1/keeper/services/'];
// The second AppRole (issue 28): the keeper reads everything above with this role's token only.
const SCENARIO_ROLE = 'keeper-scenario';

/** The KV API path of a logical prefix: `<mount>/data/<rest>` (or metadata/) on KV v2, the path itself on v1. */
function kvApiPath(prefix, version, kind = 'data') {
  const [mount, ...rest] = prefix.split('/');
  return version === 2 ? `${mount}/${kind}/${rest.join('/')}` : prefix;
}

const kvVersionOf = (prefix) => (prefix.startsWith('secret/') ? 2 : 1);

/**
 * The scenario role's policy: read below each prefix, write (and delete, list: an incarnation's
 * secret inputs are removed with it) below its `incarnations/`, detect the KV version of paths
 * below it, keep its own token alive. Nothing else: the store itself refuses the keeper's secrets.
 */
function scenarioPolicy(prefixes = SCENARIO_PREFIXES) {
  const lines = prefixes.flatMap((p) => {
    const v = kvVersionOf(p);
    const data = kvApiPath(p, v);
    const out = [
      `path "${data}*" { capabilities = ["read"] }`,
      `path "${data}incarnations/*" { capabilities = ["create", "update", "read", "delete", "list"] }`,
      `path "sys/internal/ui/mounts/${p}*" { capabilities = ["read"] }`,
    ];
    if (v === 2) out.push(`path "${kvApiPath(p, v, 'metadata')}incarnations/*" { capabilities = ["read", "list", "delete"] }`);
    return out;
  });
  return ['# Scenario secrets and credential_refs, and nothing else (docs/secrets.md).', ...lines,
    'path "auth/token/renew-self" { capabilities = ["update"] }', 'path "auth/token/lookup-self" { capabilities = ["read"] }', ''].join('\n');
}

// What keepers built before the scenario role (issue 28) used their own token for: read below the
// scenario prefix, write secret inputs. Kept on the keeper role so such a keeper keeps working
// against a store provisioned by this script (a shared dev store, a rolling upgrade); a keeper of
// today never reads or writes there with its own token (platform/runtime.ts), and what least
// privilege needs holds either way: the scenario role cannot read the keeper's secrets.
function legacyScenarioGrants(prefixes = SCENARIO_PREFIXES) {
  return prefixes.map((p) => {
    const api = kvApiPath(p, kvVersionOf(p));
    return `path "${api}*" { capabilities = ["read"] }\npath "${api}incarnations/*" { capabilities = ["create", "update", "read"] }`;
  }).join('\n');
}

const POLICY = `
# The keeper reads its own secrets, signs soul CSRs, issues its own server leaf, and detects KV versions.
path "secret/data/keeper" { capabilities = ["read"] }
path "secret/data/keeper/*" { capabilities = ["read"] }
path "kv1/keeper" { capabilities = ["read"] }
path "kv1/keeper/*" { capabilities = ["read"] }
path "sys/internal/ui/mounts/*" { capabilities = ["read"] }
path "${PKI_MOUNT}/sign/${SOUL_ROLE}" { capabilities = ["create", "update"] }
# The keeper's own leaf, renewed in place when secretstore.server_leaf is set (docs/certificates.md).
path "${PKI_MOUNT}/issue/${SERVER_ROLE}" { capabilities = ["create", "update"] }
path "auth/token/renew-self" { capabilities = ["update"] }
path "auth/token/lookup-self" { capabilities = ["read"] }
# Keepers before the scenario role only (see legacyScenarioGrants).
${legacyScenarioGrants()}
`;

const SCENARIO_POLICY = scenarioPolicy();

/** An AppRole `name` with the policy `name`; its secret_id (0400) in `file`, kept while it still logs in. */
async function provisionAppRole(name, policy, file) {
  await api('PUT', `sys/policies/acl/${name}`, { policy });
  await api('POST', `auth/approle/role/${name}`, {
    token_policies: [name], token_ttl: '1h', token_max_ttl: '24h', secret_id_ttl: '0', token_type: 'service',
  });
  await api('POST', `auth/approle/role/${name}/role-id`, { role_id: name });
  if (fs.existsSync(file)) {
    const secretId = fs.readFileSync(file, 'utf8').trim();
    const login = await fetch(`${ADDR}/v1/auth/approle/login`, {
      method: 'POST', body: JSON.stringify({ role_id: name, secret_id: secretId }),
    });
    if (login.ok) return;
  }
  const secretId = (await api('POST', `auth/approle/role/${name}/secret-id`, {})).data.secret_id;
  writeFileMode(file, secretId + '\n', 0o400);
}

async function provisionAppRoles() {
  const auths = (await api('GET', 'sys/auth')).data;
  if (!auths['approle/']) await api('POST', 'sys/auth/approle', { type: 'approle' });
  await provisionAppRole('keeper', POLICY, path.join(state, 'approle-secret-id'));
  await provisionAppRole(SCENARIO_ROLE, SCENARIO_POLICY, path.join(state, 'approle-scenario-secret-id'));
}

module.exports = { scenarioPolicy, kvApiPath, POLICY, SCENARIO_POLICY, SCENARIO_ROLE, SCENARIO_PREFIXES };
if (!isMain) return;

(async () => {
  await provisionKv();
  await provisionPki();
  await provisionServerLeaf();
  await provisionAppRoles();
})().catch((err) => {
  console.error(`provision-secretstore: ${err.message}`);
  process.exit(1);
});
