// The keeper's configuration (interface spec 4.5), as a JSON schema checked by ajv at startup.
// Defaults for the optional blocks (auth extras, logging, reaper, otel, temporal) live here too so
// the running process and docs/configuration.md agree on one source.
import { DURATION_PATTERN } from '../../common/duration';
import { GIT_SCHEMES } from '../../scenario/load/git-policy';
import { MODULES } from '../../scenario/modules';

/** The roles of api/roles.ts (a test there keeps the two lists equal): the keys of executions.modules. */
export const EXECUTION_ROLES = ['cluster-admin', 'operator', 'viewer', 'responder'] as const;

const addr = { type: 'string', pattern: '^[^\\s:]+:\\d{1,5}$', description: '<host>:<port>' } as const;
const duration = { type: 'string', pattern: DURATION_PATTERN, description: 'duration such as 30s, 15m, 24h' } as const;
const ref = { type: 'string', pattern: '^secretstore:[A-Za-z0-9_./-]+$', description: 'secretstore:<path>' } as const;
const file = { type: 'string', minLength: 1, description: 'path to a file' } as const;

// An AppRole login: role_id is not a secret; the secret_id comes from a file (mode 0400) or an
// environment variable, never from the store itself (interface spec 4.5).
const appRole = {
  type: 'object',
  additionalProperties: false,
  required: ['method', 'role_id'],
  properties: {
    method: { const: 'approle' },
    role_id: { type: 'string', minLength: 1 },
    secret_id_file: file,
    secret_id_env: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
  },
} as const;

const listener = { type: 'object', additionalProperties: false, required: ['addr'], properties: { addr } } as const;

export const configSchema = {
  $id: 'keeper-config',
  type: 'object',
  additionalProperties: false,
  required: ['kid', 'listen', 'database', 'cache', 'secretstore', 'auth'],
  properties: {
    kid: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,62}$', description: 'unique per instance' },
    listen: {
      type: 'object',
      additionalProperties: false,
      required: ['openapi', 'metrics', 'grpc'],
      properties: {
        openapi: listener,
        metrics: listener,
        mcp: listener,
        grpc: {
          type: 'object',
          additionalProperties: false,
          required: ['bootstrap', 'event_stream'],
          properties: {
            bootstrap: {
              type: 'object',
              additionalProperties: false,
              required: ['addr', 'tls'],
              properties: {
                addr,
                tls: {
                  type: 'object',
                  additionalProperties: false,
                  required: ['cert', 'key'],
                  properties: { cert: file, key: file },
                },
              },
            },
            event_stream: {
              type: 'object',
              additionalProperties: false,
              required: ['addr', 'tls'],
              properties: {
                addr,
                tls: {
                  type: 'object',
                  additionalProperties: false,
                  required: ['cert', 'key', 'ca'],
                  properties: { cert: file, key: file, ca: file },
                },
              },
            },
          },
        },
      },
    },
    database: {
      type: 'object',
      additionalProperties: false,
      required: ['dsn_ref'],
      properties: { dsn_ref: ref, pool_max: { type: 'integer', minimum: 1, maximum: 500, default: 20 } },
    },
    cache: {
      type: 'object',
      additionalProperties: false,
      required: ['addr', 'password_ref'],
      properties: {
        addr,
        password_ref: { anyOf: [ref, { const: '' }], description: 'secretstore:<path>, or "" for no password' },
      },
    },
    secretstore: {
      type: 'object',
      additionalProperties: false,
      required: ['addr', 'pki_mount', 'pki_role'],
      properties: {
        addr: { type: 'string', pattern: '^https?://[^\\s]+$', description: 'URL' },
        // A store whose certificate a private CA signed (issue 37 row 9): trusted for this client
        // only, beside Node's bundled public CAs, rather than NODE_EXTRA_CA_CERTS for the whole process.
        ca_file: {
          type: 'string',
          minLength: 1,
          description:
            "PEM file of the CA that signed the store's https certificate (relative: to keeper.yml's folder)",
        },
        token: { type: 'string', minLength: 1, description: 'dev shortcut only' },
        auth: appRole,
        // The second login (issue 28): scenario secrets, secret inputs and every credential_ref are
        // read with this role's token, whose store policy reaches only scenario_prefix. Required:
        // without it the keeper would read them with its own token, which also reads its DSN and
        // signing key (platform/config/load.ts says so at check-config).
        scenario_auth: {
          ...appRole,
          description: 'the AppRole whose policy reads only below scenario_prefix (docs/secrets.md)',
        },
        pki_mount: { type: 'string', minLength: 1 },
        pki_role: { type: 'string', minLength: 1 },
        soul_cert_ttl: {
          ...duration,
          default: '720h',
          description: "lifetime of a soul certificate; the PKI role's max_ttl must allow it",
        },
        server_leaf: {
          type: 'object',
          additionalProperties: false,
          required: ['pki_role', 'common_name'],
          description:
            "renew the gRPC listeners' certificate from the PKI at two thirds of its lifetime (docs/certificates.md)",
          properties: {
            pki_role: { type: 'string', minLength: 1 },
            common_name: { type: 'string', minLength: 1 },
            alt_names: { type: 'array', items: { type: 'string', minLength: 1 }, default: [] },
            ip_sans: { type: 'array', items: { type: 'string', minLength: 1 }, default: [] },
            ttl: { ...duration, default: '720h' },
          },
        },
        timeout: { ...duration, default: '5s' },
        // Scenarios read secrets (secretstore(...), secret inputs, credential_refs) only under this
        // prefix; the scenario_auth role's policy grants read there and nowhere else.
        scenario_prefix: {
          type: 'string',
          pattern: '^[A-Za-z0-9_-]+(/[A-Za-z0-9_.-]+)*/$',
          default: 'secret/keeper/services/',
          description: 'prefix scenarios may read secrets under, ending in /',
        },
      },
    },
    auth: {
      type: 'object',
      additionalProperties: false,
      required: ['jwt'],
      properties: {
        jwt: {
          type: 'object',
          additionalProperties: false,
          required: ['signing_key_ref', 'issuer', 'ttl_default', 'ttl_bootstrap'],
          properties: {
            signing_key_ref: ref,
            issuer: { type: 'string', minLength: 1 },
            ttl_default: duration,
            ttl_bootstrap: duration,
          },
        },
        bootstrap_token_ttl: { ...duration, default: '24h' },
        bootstrap_rate_limit: {
          type: 'object',
          additionalProperties: false,
          default: {},
          description:
            'failures per bootstrap token within window; address_failures: a coarse limit per source address for unknown tokens only',
          properties: {
            failures: { type: 'integer', minimum: 1, default: 10 },
            address_failures: { type: 'integer', minimum: 1, default: 100 },
            window: { ...duration, default: '1m' },
          },
        },
      },
    },
    temporal: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        address: { ...addr, default: '127.0.0.1:7233' },
        namespace: { type: 'string', minLength: 1, default: 'default' },
        task_queue: { type: 'string', minLength: 1, default: 'keeper' },
        ui_url: { type: 'string', default: 'http://127.0.0.1:8233' },
        tls: {
          type: 'object',
          additionalProperties: false,
          required: ['ca', 'cert', 'key'],
          description:
            "mutual TLS to the Temporal frontend: the CA that signed the frontend's certificate, and the keeper's client certificate and key",
          properties: {
            ca: file,
            cert: file,
            key: file,
            server_name: {
              type: 'string',
              pattern: '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,252}$',
              description: "the name in the frontend's certificate, when it differs from the address's host",
            },
          },
        },
      },
    },
    services: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        cache_dir: { type: 'string', minLength: 1 },
        git: {
          type: 'object',
          additionalProperties: false,
          default: {},
          description: 'which repositories services may come from (docs/security.md, git sources)',
          properties: {
            schemes: {
              type: 'array',
              uniqueItems: true,
              default: ['https', 'ssh'],
              items: { enum: [...GIT_SCHEMES] },
              description: "URL schemes allowed; file (the keeper's own disk) only when listed",
            },
            hosts: {
              type: 'array',
              uniqueItems: true,
              default: [],
              items: {
                type: 'string',
                pattern: '^(?:\\*|(?:\\*\\.)?[A-Za-z0-9_][A-Za-z0-9_.-]*|[0-9A-Fa-f:]+)$',
                description: 'a host name, *.<domain>, an IP address, or * for any host',
              },
              description: 'hosts a repository may be on; empty allows none',
            },
            max_repo_bytes: { type: 'integer', minimum: 1024, maximum: 68719476736, default: 268435456 },
            timeout: { ...duration, default: '2m' },
            file_shared: {
              type: 'boolean',
              default: false,
              description:
                'file:// paths are on storage every keeper sees; otherwise a file:// service is refused while more than one keeper is live',
            },
          },
        },
      },
    },
    logging: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: { level: { enum: ['debug', 'info', 'warn', 'error'], default: 'info' } },
    },
    api: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        rate_limit: {
          type: 'object',
          additionalProperties: false,
          default: {},
          description:
            'per operator, per keeper: a token bucket refilled at requests_per_second, holding at most burst',
          properties: {
            requests_per_second: { type: 'number', exclusiveMinimum: 0, maximum: 1000000, default: 100 },
            burst: { type: 'integer', minimum: 1, maximum: 1000000, default: 200 },
          },
        },
      },
    },
    hub: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        // A reconnect storm (every soul back at once after a keeper restart) is met at a bounded
        // rate: streams beyond it are refused with RESOURCE_EXHAUSTED and a retry-after slot.
        // 200/s is what one keeper on 2 cores completes (TLS, registry read, lease) with room left
        // for its runs; bench/storm measures it (docs/reliability.md).
        accept_rate: {
          type: 'object',
          additionalProperties: false,
          default: {},
          description: 'new soul streams admitted per second, with a burst',
          properties: {
            per_second: { type: 'number', exclusiveMinimum: 0, maximum: 1000000, default: 200 },
            burst: { type: 'integer', minimum: 1, maximum: 1000000, default: 400 },
          },
        },
      },
    },
    plans: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        // A plan shows the world as it was; the older it is, the likelier a host drifted and the
        // apply is refused anyway. An hour covers a review; a longer wait deserves a fresh plan.
        ttl: { ...duration, default: '1h' },
      },
    },
    retention: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description:
        'how long history is kept in PostgreSQL, pruned by a Temporal schedule every interval (docs/configuration.md)',
      properties: {
        // A plan is appliable for plans.ttl only; a week keeps it readable for a review after that.
        plans: { ...duration, default: '168h' },
        // Runs are the audit of what was applied; a quarter covers an incident review. The runs an
        // incarnation's state and history refer to are never pruned.
        runs: { ...duration, default: '2160h' },
        // Who changed what: a year, as audits usually ask.
        activity: { ...duration, default: '8760h' },
        interval: { ...duration, default: '1h' },
      },
    },
    reaper: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        // A silent soul must show disconnected within 5 s (interface spec 1.4): the keeper closes a
        // stream with no heartbeat for lease_ttl, checked every lease_ttl/3, so at most 3.5 + 1.2 s;
        // a vanished keeper's leases lapse after 3.5 s and the reconciler marks them within 1 s.
        // Cost: one heartbeat and one lease refresh per soul every 1.17 s (bench/presence).
        interval: { ...duration, default: '1s' },
        lease_ttl: { ...duration, default: '3500ms' },
      },
    },
    ssh: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'push mode over SSH (docs/ssh.md)',
      properties: {
        // Each open session is an ssh2 connection (crypto in this process): 8 keeps two cores responsive.
        max_sessions: { type: 'integer', minimum: 1, maximum: 1024, default: 8 },
        connect_timeout: { ...duration, default: '10s' },
        command_timeout: { ...duration, default: '30s' },
        soul_command: { type: 'string', minLength: 1, maxLength: 1024, default: 'soul' },
        state_dir: { type: 'string', minLength: 1, maxLength: 1024, pattern: '^/', default: '/var/lib/soul/ssh' },
      },
    },
    // One-off executions (docs/executions.md): the safety limits an organisation tunes to its fleet.
    executions: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        // Ten hosts is a handful an operator can name; above it a typo in a target reaches a fleet.
        confirm_above: { type: 'integer', minimum: 0, maximum: 1000000, default: 10 },
        per_operator: { type: 'integer', minimum: 1, maximum: 1000, default: 4 },
        modules: {
          type: 'object',
          default: {},
          description: 'per role, the modules it may run; a role named here replaces its built-in list',
          propertyNames: { enum: [...EXECUTION_ROLES] },
          additionalProperties: {
            type: 'array',
            uniqueItems: true,
            items: { enum: ['*', ...[...MODULES.keys()].sort()] },
          },
        },
        // Issue 45 H-2: an execution hands a referenced secret to whatever its module does with it,
        // so a role references only the secrets named here (none by default, cluster-admin included).
        secret_prefixes: {
          type: 'object',
          default: {},
          description: 'per role, the store paths (below secretstore.scenario_prefix) its executions may reference',
          propertyNames: { enum: [...EXECUTION_ROLES] },
          additionalProperties: {
            type: 'array',
            uniqueItems: true,
            maxItems: 64,
            items: {
              type: 'string',
              pattern: '^[A-Za-z0-9_-]+(/[A-Za-z0-9_.-]+)*/?$',
              description: 'a store path such as secret/keeper/services/web/ (a prefix of whole segments)',
            },
          },
        },
      },
    },
    otel: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: { enabled: { type: 'boolean', default: false }, endpoint: { type: 'string' } },
    },
  },
} as const;
