// The validated, defaulted configuration as the process uses it. File paths are absolute (resolved
// against the config file's folder) and durations are milliseconds.
import type { GitPolicy } from '../../scenario/load/git-policy';

export interface ListenerConfig {
  addr: string;
}
/** Files resolved to absolute paths; read at connect time. */
export interface TemporalTls {
  ca: string;
  cert: string;
  key: string;
  server_name?: string;
}
export interface AppRoleAuth {
  method: 'approle';
  role_id: string;
  secret_id_file?: string;
  secret_id_env?: string;
}
export interface TlsFiles {
  cert: string;
  key: string;
  ca?: string;
}

export interface KeeperConfig {
  file: string;
  kid: string;
  listen: {
    openapi: ListenerConfig;
    metrics: ListenerConfig;
    mcp?: ListenerConfig;
    grpc: {
      bootstrap: ListenerConfig & { tls: TlsFiles };
      event_stream: ListenerConfig & { tls: Required<TlsFiles> };
    };
  };
  database: { dsn_ref: string; pool_max: number };
  cache: { addr: string; password_ref: string };
  secretstore: {
    addr: string;
    /** The CA of an https store's certificate (secretstore.ca_file), absolute. */
    ca_file?: string;
    token?: string;
    auth?: AppRoleAuth;
    pki_mount: string;
    pki_role: string;
    soul_cert_ttl_ms: number;
    server_leaf?: { pki_role: string; common_name: string; alt_names: string[]; ip_sans: string[]; ttl_ms: number };
    timeout_ms: number;
    /** Scenarios read secrets only below this prefix (docs/secrets.md). */
    scenario_prefix: string;
    /** The AppRole whose token reads scenario secrets and credential_refs (its policy: scenario_prefix only). */
    scenario_auth: AppRoleAuth;
  };
  auth: {
    jwt: { signing_key_ref: string; issuer: string; ttl_default_ms: number; ttl_bootstrap_ms: number };
    bootstrap_token_ttl_ms: number;
    bootstrap_rate_limit: { failures: number; address_failures: number; window_ms: number };
  };
  temporal: { address: string; namespace: string; task_queue: string; ui_url: string; tls?: TemporalTls };
  services: { cache_dir: string; git: GitPolicy };
  logging: { level: 'debug' | 'info' | 'warn' | 'error' };
  api: { rate_limit: { requests_per_second: number; burst: number } };
  plans: { ttl_ms: number };
  retention: { plans_ms: number; runs_ms: number; activity_ms: number; interval_ms: number };
  reaper: { interval_ms: number; lease_ttl_ms: number };
  hub: { accept_rate: { per_second: number; burst: number } };
  /** Push mode over SSH (docs/ssh.md). */
  ssh: {
    max_sessions: number;
    connect_timeout_ms: number;
    command_timeout_ms: number;
    soul_command: string;
    state_dir: string;
  };
  /** One-off executions' limits (docs/executions.md); `modules` overrides the built-in allow-list per role. */
  executions: {
    confirm_above: number;
    per_operator: number;
    modules: Record<string, string[]>;
    /** Per role, the store path prefixes its executions' `secretstore:` references may name (none by default). */
    secret_prefixes: Record<string, string[]>;
  };
  otel: { enabled: boolean; endpoint?: string };
}
