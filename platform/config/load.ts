// Loads keeper.yml: YAML -> ajv (schema.ts, with defaults) -> typed KeeperConfig. Every problem is
// reported at once as "<file>: <key>: <rule>", so an operator fixes the file in one pass.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Ajv, { type ErrorObject } from 'ajv';
import yaml from 'js-yaml';
import { parseDuration } from '../../common/duration';
import { underPrefix } from '../../common/secret';
import { configSchema } from './schema';
import type { KeeperConfig } from './types';

export class ConfigError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`invalid configuration ${file}:\n` + problems.map((p) => `  - ${p}`).join('\n'));
    this.name = 'ConfigError';
  }
}

// verbose: errors carry their schema, whose description is the human form of the rule.
const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: true, allowUnionTypes: true, verbose: true });
// Typed loosely on purpose: the schema is the source of truth, KeeperConfig the shape after defaults.
const validate: ((doc: unknown) => boolean) & { errors?: ErrorObject[] | null } = ajv.compile(configSchema);

function keyOf(err: ErrorObject): string {
  const base = err.instancePath.replace(/^\//, '').replace(/\//g, '.');
  // A key refused by `propertyNames` (e.g. an unknown role under executions.modules) is named itself.
  if (err.propertyName !== undefined) return [base, err.propertyName].filter(Boolean).join('.');
  if (err.keyword === 'required')
    return [base, (err.params as { missingProperty: string }).missingProperty].filter(Boolean).join('.');
  if (err.keyword === 'additionalProperties') {
    return [base, (err.params as { additionalProperty: string }).additionalProperty].filter(Boolean).join('.');
  }
  return base || '(top level)';
}

function ruleOf(err: ErrorObject): string {
  const schema = err.parentSchema as { description?: string } | undefined;
  switch (err.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known key (check the spelling; see docs/configuration.md)';
    case 'pattern':
      return `must be ${schema?.description ?? `text matching ${(err.params as { pattern: string }).pattern}`}`;
    case 'const':
      return `must be ${JSON.stringify((err.params as { allowedValue: unknown }).allowedValue)}`;
    case 'enum':
      return `must be one of ${(err.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
    default:
      return err.message ?? err.keyword;
  }
}

/** Turns ajv errors into one line per key; anyOf noise is folded into the branch's description. */
export function describeErrors(errors: ErrorObject[]): string[] {
  const lines = new Map<string, string>();
  for (const err of errors) {
    const key = keyOf(err);
    if (err.keyword === 'anyOf') {
      lines.set(
        key,
        `${key}: must be ${(err.parentSchema as { description?: string }).description ?? 'one of the allowed forms'}`,
      );
      continue;
    }
    if (errors.some((e) => e.keyword === 'anyOf' && keyOf(e) === key)) continue;
    // Its `enum` error names the key; this one only says "property name must be valid".
    if (err.keyword === 'propertyNames') continue;
    if (!lines.has(key)) lines.set(key, `${key}: ${ruleOf(err)}`);
  }
  return [...lines.values()];
}

function resolveFile(dir: string, p: string): string {
  return path.resolve(dir, p.startsWith('~/') ? path.join(os.homedir(), p.slice(2)) : p);
}

/**
 * The scenario role (issue 28): scenario secrets and credential_refs are read with a token of their
 * own, so a bug in the engine cannot reach the keeper's secrets. Refused rather than defaulted:
 * without `scenario_auth` the only token at hand is the keeper's own, which reads its DSN and
 * signing key. The same role as `auth`, or a keeper secret below the scenario prefix, would give
 * that token back to scenarios, so both are refused too.
 */
function scenarioAuthProblems(raw: Record<string, any>): string[] {
  const ss = raw.secretstore;
  const sa = ss.scenario_auth;
  if (!sa) {
    return [
      'secretstore.scenario_auth: is required: the AppRole (role_id, secret_id_file or secret_id_env) whose policy reads only below ' +
        "secretstore.scenario_prefix; scenario secrets and credential_refs are never read with the keeper's own token (docs/secrets.md)",
    ];
  }
  const out: string[] = [];
  if (!sa.secret_id_file && !sa.secret_id_env) {
    out.push(
      'secretstore.scenario_auth.secret_id_file: is required (or secretstore.scenario_auth.secret_id_env naming an environment variable)',
    );
  }
  if (ss.auth && sa.role_id === ss.auth.role_id) {
    out.push(
      `secretstore.scenario_auth.role_id: must name a role other than secretstore.auth.role_id ("${sa.role_id}"): the scenario role's policy reads only below secretstore.scenario_prefix`,
    );
  }
  const own: [string, unknown][] = [
    ['database.dsn_ref', raw.database.dsn_ref],
    ['cache.password_ref', raw.cache.password_ref],
    ['auth.jwt.signing_key_ref', raw.auth.jwt.signing_key_ref],
  ];
  const prefix = String(ss.scenario_prefix).replace(/\/+$/, '');
  for (const [key, ref] of own) {
    if (typeof ref !== 'string' || ref === '') continue;
    const p = ref.slice('secretstore:'.length).replace(/^\/+|\/+$/g, '');
    if (p === prefix || p.startsWith(`${prefix}/`)) {
      out.push(
        `${key}: must not lie below secretstore.scenario_prefix (${ss.scenario_prefix}): scenarios may read everything there; keep the keeper's own secrets beside it`,
      );
    }
  }
  return out;
}

/** Validates an already-parsed document; `file` names the source in errors and anchors relative paths. */
export function parseConfig(doc: unknown, file: string): KeeperConfig {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new ConfigError(file, ['(top level): must be a YAML mapping of configuration keys']);
  }
  const raw = structuredClone(doc) as Record<string, any>;
  if (!validate(raw)) throw new ConfigError(file, describeErrors(validate.errors ?? []));
  const dir = path.dirname(path.resolve(file));
  const g = raw.listen.grpc;
  const ss = raw.secretstore;
  if (!ss.token && !ss.auth) {
    throw new ConfigError(file, [
      'secretstore.auth: is required (approle with role_id and secret_id_file or secret_id_env; secretstore.token is a dev shortcut)',
    ]);
  }
  if (ss.auth && !ss.auth.secret_id_file && !ss.auth.secret_id_env) {
    throw new ConfigError(file, [
      'secretstore.auth.secret_id_file: is required (or secretstore.auth.secret_id_env naming an environment variable)',
    ]);
  }
  const scenarioProblems = scenarioAuthProblems(raw);
  if (scenarioProblems.length > 0) throw new ConfigError(file, scenarioProblems);
  // The keeper reads scenario secrets only below scenario_prefix: a prefix beside it would allow nothing.
  const secretPrefixProblems = Object.entries(raw.executions.secret_prefixes as Record<string, string[]>).flatMap(
    ([role, list]) =>
      list
        .filter((p) => !underPrefix(p.replace(/\/+$/, ''), ss.scenario_prefix))
        .map(
          (p) =>
            `executions.secret_prefixes.${role}: "${p}" must lie below secretstore.scenario_prefix (${ss.scenario_prefix}), the only secrets the keeper reads for executions`,
        ),
  );
  if (secretPrefixProblems.length > 0) throw new ConfigError(file, secretPrefixProblems);
  // A plan pruned while it may still be applied would turn a valid apply into a 404.
  if (parseDuration(raw.retention.plans) < parseDuration(raw.plans.ttl)) {
    throw new ConfigError(file, [
      `retention.plans: must be at least plans.ttl (${raw.plans.ttl}): a plan is kept at least as long as it can be applied`,
    ]);
  }
  if (parseDuration(raw.retention.interval) < 1000)
    throw new ConfigError(file, ['retention.interval: must be at least 1s']);
  return {
    file: path.resolve(file),
    kid: raw.kid,
    listen: {
      openapi: raw.listen.openapi,
      metrics: raw.listen.metrics,
      ...(raw.listen.mcp ? { mcp: raw.listen.mcp } : {}),
      grpc: {
        bootstrap: {
          addr: g.bootstrap.addr,
          tls: { cert: resolveFile(dir, g.bootstrap.tls.cert), key: resolveFile(dir, g.bootstrap.tls.key) },
        },
        event_stream: {
          addr: g.event_stream.addr,
          tls: {
            cert: resolveFile(dir, g.event_stream.tls.cert),
            key: resolveFile(dir, g.event_stream.tls.key),
            ca: resolveFile(dir, g.event_stream.tls.ca),
          },
        },
      },
    },
    database: raw.database,
    cache: raw.cache,
    secretstore: {
      addr: ss.addr.replace(/\/+$/, ''),
      ...(ss.ca_file ? { ca_file: resolveFile(dir, ss.ca_file) } : {}),
      ...(ss.token ? { token: ss.token } : {}),
      ...(ss.auth
        ? {
            auth: {
              ...ss.auth,
              ...(ss.auth.secret_id_file ? { secret_id_file: resolveFile(dir, ss.auth.secret_id_file) } : {}),
            },
          }
        : {}),
      pki_mount: ss.pki_mount,
      pki_role: ss.pki_role,
      soul_cert_ttl_ms: parseDuration(ss.soul_cert_ttl),
      ...(ss.server_leaf
        ? {
            server_leaf: {
              pki_role: ss.server_leaf.pki_role,
              common_name: ss.server_leaf.common_name,
              alt_names: ss.server_leaf.alt_names,
              ip_sans: ss.server_leaf.ip_sans,
              ttl_ms: parseDuration(ss.server_leaf.ttl),
            },
          }
        : {}),
      timeout_ms: parseDuration(ss.timeout),
      scenario_prefix: ss.scenario_prefix,
      scenario_auth: {
        ...ss.scenario_auth,
        ...(ss.scenario_auth.secret_id_file
          ? { secret_id_file: resolveFile(dir, ss.scenario_auth.secret_id_file) }
          : {}),
      },
    },
    auth: {
      jwt: {
        signing_key_ref: raw.auth.jwt.signing_key_ref,
        issuer: raw.auth.jwt.issuer,
        ttl_default_ms: parseDuration(raw.auth.jwt.ttl_default),
        ttl_bootstrap_ms: parseDuration(raw.auth.jwt.ttl_bootstrap),
      },
      bootstrap_token_ttl_ms: parseDuration(raw.auth.bootstrap_token_ttl),
      bootstrap_rate_limit: {
        failures: raw.auth.bootstrap_rate_limit.failures,
        address_failures: raw.auth.bootstrap_rate_limit.address_failures,
        window_ms: parseDuration(raw.auth.bootstrap_rate_limit.window),
      },
    },
    temporal: {
      address: raw.temporal.address,
      namespace: raw.temporal.namespace,
      task_queue: raw.temporal.task_queue,
      ui_url: raw.temporal.ui_url,
      ...(raw.temporal.tls
        ? {
            tls: {
              ca: resolveFile(dir, raw.temporal.tls.ca),
              cert: resolveFile(dir, raw.temporal.tls.cert),
              key: resolveFile(dir, raw.temporal.tls.key),
              ...(raw.temporal.tls.server_name ? { server_name: raw.temporal.tls.server_name } : {}),
            },
          }
        : {}),
    },
    services: {
      cache_dir: resolveFile(dir, raw.services.cache_dir ?? path.join(os.homedir(), '.cache', 'keeper', 'services')),
      git: {
        schemes: raw.services.git.schemes,
        hosts: raw.services.git.hosts,
        maxRepoBytes: raw.services.git.max_repo_bytes,
        timeoutMs: parseDuration(raw.services.git.timeout),
        fileShared: raw.services.git.file_shared,
      },
    },
    logging: raw.logging,
    api: {
      rate_limit: { requests_per_second: raw.api.rate_limit.requests_per_second, burst: raw.api.rate_limit.burst },
    },
    plans: { ttl_ms: parseDuration(raw.plans.ttl) },
    retention: {
      plans_ms: parseDuration(raw.retention.plans),
      runs_ms: parseDuration(raw.retention.runs),
      activity_ms: parseDuration(raw.retention.activity),
      interval_ms: parseDuration(raw.retention.interval),
    },
    reaper: { interval_ms: parseDuration(raw.reaper.interval), lease_ttl_ms: parseDuration(raw.reaper.lease_ttl) },
    hub: { accept_rate: { per_second: raw.hub.accept_rate.per_second, burst: raw.hub.accept_rate.burst } },
    ssh: {
      max_sessions: raw.ssh.max_sessions,
      connect_timeout_ms: parseDuration(raw.ssh.connect_timeout),
      command_timeout_ms: parseDuration(raw.ssh.command_timeout),
      soul_command: raw.ssh.soul_command,
      state_dir: raw.ssh.state_dir,
    },
    executions: {
      confirm_above: raw.executions.confirm_above,
      per_operator: raw.executions.per_operator,
      modules: raw.executions.modules,
      secret_prefixes: raw.executions.secret_prefixes,
    },
    otel: raw.otel,
  };
}

export function loadConfig(file: string): KeeperConfig {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(file, [
      `cannot read the file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); pass --config=<path to keeper.yml>`,
    ]);
  }
  let doc: unknown;
  try {
    doc = yaml.load(text, { filename: file, schema: yaml.CORE_SCHEMA });
  } catch (err) {
    throw new ConfigError(file, [`not valid YAML: ${(err as Error).message.split('\n')[0]}`]);
  }
  return parseConfig(doc, file);
}
