#!/usr/bin/env bash
# The production rehearsal (issue 33, docs/production.md): Keeper on what its operators run, beside
# the local stack and without touching it.
#   - the Temporal *server* (built from its Go module), on the stack's PostgreSQL in databases of its
#     own (`temporal`, `temporal_visibility`, role `temporal`), schemas installed by its SQL tool,
#     frontend behind mutual TLS with a CA made here, namespace `keeper` with a retention, the
#     keeper's search attributes registered by `keeper temporal-setup`;
#   - the secrets store in server mode (file storage, its own port), initialised, unsealed with its
#     keys and provisioned by scripts/provision-secretstore.js, as an operator would;
#   - two keepers from dist/ (kids prod-a and prod-b, their own ports), on the stack's Redis and a
#     database `keeper_prod` of the stack's PostgreSQL; `make test-prod` replaces them with the
#     keepers of the .deb package in two Debian roots booted with systemd (test/prod/).
#
#   scripts/prod-rehearsal.sh up       build (cached) and start what is missing; idempotent
#   scripts/prod-rehearsal.sh status   one line per part: up or down
#   scripts/prod-rehearsal.sh down     stop the processes (data kept: `up` again resumes)
#   scripts/prod-rehearsal.sh purge    down, then drop the databases, roles and .prod/
#   scripts/prod-rehearsal.sh store    only the secrets store: start, initialise, unseal, provision
#   scripts/prod-rehearsal.sh seal | unseal | temporal-stop | temporal-start | pg-block | pg-unblock
#                            | redis-kill PID...   the faults the rehearsal's test drives (test/prod/)
#   KEEPER_PROD_KEEPERS=packaged ... up   everything but the keepers: test/prod/ starts the .deb's
#                                      keepers in Debian roots on the same ports
#
# State: $KEEPER_PROD_DIR (default .prod/): configs, certificates, unseal keys (0600), logs, pids.
# Ports (none the stack uses): Temporal 7333 (frontend), 7334-7337, 7340-7343 (membership);
# secrets store 8300; keepers 8380/8381 (API), 9380/9381 (metrics), 9480-9483 (gRPC).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
STATE="${KEEPER_PROD_DIR:-$ROOT/.prod}"
STACK="${KEEPER_STACK_DIR:-$ROOT/.stack}"
FRONTEND=127.0.0.1:7333
STORE_ADDR=http://127.0.0.1:8300
TLS_NAME=temporal.keeper.local
NAMESPACE=keeper
RETENTION=72h
SHARDS=4
SEARCH_ATTRIBUTES="KeeperIncarnation KeeperOperation KeeperServiceRef KeeperService"

log() { echo "prod-rehearsal: $*" >&2; }
die() { echo "prod-rehearsal: error: $*" >&2; exit 1; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
as_postgres() { (cd / && as_root runuser -u postgres -- "$@"); }

[ -s "$STACK/env" ] || die "the local stack is not up ($STACK/env is missing): the rehearsal uses its PostgreSQL and Redis"
# shellcheck disable=SC1091
. "$STACK/env"
mkdir -p "$STATE/logs" "$STATE/tls" "$STATE/run"
chmod 700 "$STATE"

tools() {
  "$ROOT/scripts/build-temporal-server.sh" build
  TSERVER="$("$ROOT/scripts/build-temporal-server.sh" path)"
  TEMPORAL="$("$ROOT/scripts/build-tools.sh" path-temporal)"
  VAULT="$("$ROOT/scripts/build-tools.sh" path-bao)"
  [ -x "$TEMPORAL" ] && [ -x "$VAULT" ] || die "the stack's tools are missing; the stack must be up (make stack)"
  [ -f "$ROOT/dist/keeper/cli.js" ] || die "the keeper is not built: npx tsc -p tsconfig.json && bash scripts/build-extra.sh"
}
paths() {
  TSERVER="$("$ROOT/scripts/build-temporal-server.sh" path)"
  TEMPORAL="$("$ROOT/scripts/build-tools.sh" path-temporal)"
  VAULT="$("$ROOT/scripts/build-tools.sh" path-bao)"
}

rand() { node -e 'process.stdout.write(require("crypto").randomBytes(18).toString("hex"))'; }
generated() {
  local f="$STATE/generated.env"
  if [ ! -s "$f" ]; then
    (umask 077; {
      echo "TEMPORAL_PG_PASSWORD=$(rand)"
      echo "SIGNING_KEY=$(node -e 'process.stdout.write(require("crypto").randomBytes(32).toString("base64"))')"
    } >"$f")
  fi
  # shellcheck disable=SC1090
  . "$f"
}

pid_alive() { [ -s "$STATE/run/$1.pid" ] && kill -0 "$(cat "$STATE/run/$1.pid")" 2>/dev/null; }
stop_pid() {
  local name="$1" pid
  pid_alive "$name" || { rm -f "$STATE/run/$name.pid"; return 0; }
  pid="$(cat "$STATE/run/$name.pid")"
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$STATE/run/$name.pid"
}

# --- PostgreSQL: Temporal's two databases, owned by a role that may do nothing else.
postgres() {
  as_postgres psql -q -v ON_ERROR_STOP=1 -d postgres >/dev/null <<SQL
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'temporal') THEN
    CREATE ROLE temporal LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD '$TEMPORAL_PG_PASSWORD';
  ELSE
    ALTER ROLE temporal LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD '$TEMPORAL_PG_PASSWORD';
  END IF;
END \$\$;
SQL
  local db
  for db in temporal temporal_visibility; do
    if ! as_postgres psql -tAq -d postgres -c "SELECT 1 FROM pg_database WHERE datname='$db'" | grep -q 1; then
      as_postgres createdb -O temporal "$db"
    fi
    # Only its owner (and the superuser) may connect: the keeper's role cannot read Temporal's data.
    as_postgres psql -q -d postgres -c "REVOKE CONNECT ON DATABASE $db FROM PUBLIC" >/dev/null
  done
  # keeper_prod belongs to this state folder: one left by an earlier (removed) folder holds operators
  # whose credentials are gone, and `keeper init` would be refused on it, so it is made anew.
  if [ ! -e "$STATE/keeper_prod.created" ]; then
    as_postgres dropdb --if-exists keeper_prod
    as_postgres createdb -O keeper keeper_prod
    : >"$STATE/keeper_prod.created"
  fi
  # Schemas: the versioning tables once, then every versioned step up to the latest (idempotent).
  local sql=(env SQL_PASSWORD="$TEMPORAL_PG_PASSWORD" "$TSERVER/temporal-sql-tool" --plugin postgres12 --ep 127.0.0.1 -p 5432 -u temporal)
  for db in temporal temporal_visibility; do
    local name=temporal; [ "$db" = temporal_visibility ] && name=visibility
    if ! PGPASSWORD="$TEMPORAL_PG_PASSWORD" psql -h 127.0.0.1 -U temporal -d "$db" -tAq -c "SELECT 1 FROM schema_version LIMIT 1" 2>/dev/null | grep -q 1; then
      "${sql[@]}" --db "$db" setup-schema -v 0.0 >>"$STATE/logs/schema.log" 2>&1 || die "setup-schema $db failed; see $STATE/logs/schema.log"
    fi
    "${sql[@]}" --db "$db" update-schema --schema-name "postgresql/v12/$name" >>"$STATE/logs/schema.log" 2>&1 \
      || die "update-schema $db failed; see $STATE/logs/schema.log"
  done
}

# --- Certificates: a CA of the rehearsal, the frontend's leaf, client leaves (keepers, the
# server's own system worker, the operator's CLI). EC P-256, made once.
certs() {
  local d="$STATE/tls/temporal"
  [ -s "$d/operator.crt" ] && return 0
  mkdir -p "$d" && chmod 700 "$d"
  (
    cd "$d" && umask 077
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 3650 \
      -subj /CN=keeper-prod-temporal-ca -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
    printf 'subjectAltName=DNS:%s,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\nbasicConstraints=CA:FALSE\n' "$TLS_NAME" >server.ext
    printf 'extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n' >client.ext
    for leaf in frontend keeper worker operator; do
      local ext=client.ext cn="$leaf"
      [ "$leaf" = frontend ] && { ext=server.ext; cn="$TLS_NAME"; }
      openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$leaf.key" -out "$leaf.csr" -subj "/CN=$cn"
      openssl x509 -req -in "$leaf.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 825 -out "$leaf.crt" -extfile "$ext"
    done
    chmod 644 ca.pem ./*.crt
  ) >"$STATE/logs/certs.log" 2>&1 || die "making the Temporal certificates failed; see $STATE/logs/certs.log"
}
TLS_ARGS() {
  local d="$STATE/tls/temporal"
  echo --tls-ca-path "$d/ca.pem" --tls-cert-path "$d/operator.crt" --tls-key-path "$d/operator.key" --tls-server-name "$TLS_NAME"
}
tctl() { # shellcheck disable=SC2046
  "$TEMPORAL" "$@" --address "$FRONTEND" $(TLS_ARGS); }
temporal_healthy() { tctl operator cluster health >/dev/null 2>&1; }

temporal_config() {
  local c="$STATE/temporal/config" d="$STATE/tls/temporal"
  mkdir -p "$c" && chmod 700 "$STATE/temporal"
  # Dynamic config: new search attributes are visible at once (the keeper checks them right after
  # temporal-setup); everything else keeps the server's defaults.
  printf '%s\n' 'system.forceSearchAttributesCacheRefreshOnRead:' '  - value: true' '    constraints: {}' >"$c/dynamic.yaml"
  (umask 077; cat >"$c/production.yaml" <<EOF
log: { stdout: true, level: warn }
persistence:
  defaultStore: default
  visibilityStore: visibility
  # Fixed for the life of a cluster; production sizes it to its load (docs/production.md).
  numHistoryShards: $SHARDS
  datastores:
    default:
      sql: { pluginName: postgres12, databaseName: temporal, connectAddr: "127.0.0.1:5432", connectProtocol: tcp,
             user: temporal, password: "$TEMPORAL_PG_PASSWORD", maxConns: 20, maxIdleConns: 20, maxConnLifetime: 1h }
    visibility:
      sql: { pluginName: postgres12, databaseName: temporal_visibility, connectAddr: "127.0.0.1:5432", connectProtocol: tcp,
             user: temporal, password: "$TEMPORAL_PG_PASSWORD", maxConns: 5, maxIdleConns: 5, maxConnLifetime: 1h }
global:
  membership: { maxJoinDuration: 30s, broadcastAddress: "127.0.0.1" }
  tls:
    frontend:
      server: { certFile: $d/frontend.crt, keyFile: $d/frontend.key, clientCaFiles: [$d/ca.pem], requireClientAuth: true }
      client: { serverName: $TLS_NAME, rootCaFiles: [$d/ca.pem] }
    systemWorker:
      certFile: $d/worker.crt
      keyFile: $d/worker.key
      client: { serverName: $TLS_NAME, rootCaFiles: [$d/ca.pem] }
services:
  frontend: { rpc: { grpcPort: 7333, membershipPort: 7340, bindOnLocalHost: true, httpPort: 7337 } }
  history: { rpc: { grpcPort: 7334, membershipPort: 7341, bindOnLocalHost: true } }
  matching: { rpc: { grpcPort: 7335, membershipPort: 7342, bindOnLocalHost: true } }
  worker: { rpc: { grpcPort: 7336, membershipPort: 7343, bindOnLocalHost: true } }
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active: { enabled: true, initialFailoverVersion: 1, rpcName: frontend, rpcAddress: "$FRONTEND" }
dcRedirectionPolicy: { policy: noop }
dynamicConfigClient: { filepath: $c/dynamic.yaml, pollInterval: 10s }
EOF
  )
}

start_temporal() {
  if pid_alive temporal && temporal_healthy; then return 0; fi
  stop_pid temporal
  temporal_config
  local t0=$SECONDS
  # --allow-no-auth: access is decided by the frontend's mutual TLS (only this CA's clients get in);
  # per-namespace authorization (a claim mapper) is docs/production.md's next step.
  nohup "$TSERVER/temporal-server" --root "$STATE/temporal" --config config --env production --allow-no-auth start \
    >>"$STATE/logs/temporal.log" 2>&1 &
  echo $! >"$STATE/run/temporal.pid"
  for _ in $(seq 1 300); do
    temporal_healthy && { log "Temporal server up on $FRONTEND (mTLS) in $((SECONDS - t0))s"; return 0; }
    pid_alive temporal || die "the Temporal server exited; see $STATE/logs/temporal.log"
    sleep 0.5
  done
  die "the Temporal frontend did not become healthy on $FRONTEND; see $STATE/logs/temporal.log"
}

namespace() {
  if ! tctl operator namespace describe --namespace "$NAMESPACE" >/dev/null 2>&1; then
    tctl operator namespace create --namespace "$NAMESPACE" --retention "$RETENTION" >/dev/null
    log "namespace $NAMESPACE created (retention $RETENTION)"
  fi
  # The namespace takes a moment to reach every service's cache.
  for _ in $(seq 1 60); do tctl workflow list --namespace "$NAMESPACE" --limit 1 >/dev/null 2>&1 && return 0; sleep 0.5; done
  die "namespace $NAMESPACE does not answer"
}

# --- The secrets store in server mode: file storage, initialised once, unsealed on every start.
store() { VAULT_ADDR="$STORE_ADDR" "$VAULT" "$@"; }
store_status() { store status -format=json 2>/dev/null || true; }
start_store() {
  mkdir -p "$STATE/store/data" && chmod 700 "$STATE/store"
  cat >"$STATE/store/config.hcl" <<EOF
storage "file" { path = "$STATE/store/data" }
# Loopback only in the rehearsal; a production store listens with TLS (docs/production.md).
listener "tcp" {
  address = "127.0.0.1:8300"
  cluster_address = "127.0.0.1:8301"
  tls_disable = true
}
api_addr = "$STORE_ADDR"
cluster_addr = "http://127.0.0.1:8301"
disable_mlock = true
ui = false
EOF
  if ! pid_alive store; then
    nohup "$VAULT" server -config "$STATE/store/config.hcl" >>"$STATE/logs/store.log" 2>&1 &
    echo $! >"$STATE/run/store.pid"
    for _ in $(seq 1 100); do curl -s -o /dev/null "$STORE_ADDR/v1/sys/health" && break; sleep 0.2; done
  fi
  if store_status | grep -q '"initialized": false'; then
    (umask 077; store operator init -key-shares=3 -key-threshold=2 -format=json >"$STATE/store/init.json")
    log "secrets store initialised: 3 unseal keys (threshold 2) and the root token in $STATE/store/init.json (0600)"
  fi
  unseal
}
unseal() {
  store_status | grep -q '"sealed": true' || return 0
  local k
  for k in 0 1; do
    store operator unseal "$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).unseal_keys_b64[+process.argv[2]])' "$STATE/store/init.json" "$k")" >/dev/null
  done
  store_status | grep -q '"sealed": false' || die "the secrets store stays sealed; see $STATE/logs/store.log"
}
provision() {
  local root; root="$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).root_token)' "$STATE/store/init.json")"
  # provision-secretstore.js reads its inputs from <dir>/generated.env, as for the dev store.
  (umask 077; printf 'PG_PASSWORD=%s\nREDIS_PASSWORD=%s\nSIGNING_KEY=%s\nBAO_ROOT_TOKEN=%s\n' \
    "$PG_PASSWORD" "$REDIS_PASSWORD" "$SIGNING_KEY" "$root" >"$STATE/store/generated.env")
  KEEPER_PROVISION_ADDR="$STORE_ADDR" KEEPER_PROVISION_DB=keeper_prod node "$ROOT/scripts/provision-secretstore.js" "$STATE/store" \
    || die "provisioning the secrets store failed"
}

# --- The keepers.
keeper_config() {
  local name="$1" n="$2" t="$STATE/tls/temporal" s="$STATE/store"
  mkdir -p "$STATE/keeper-$name"
  cat >"$STATE/keeper-$name/keeper.yml" <<EOF
kid: prod-$name
listen:
  openapi: { addr: "127.0.0.1:838$n" }
  metrics: { addr: "127.0.0.1:938$n" }
  grpc:
    bootstrap: { addr: "127.0.0.1:948$((2 * n))", tls: { cert: $s/tls/keeper.crt, key: $s/tls/keeper.key } }
    event_stream: { addr: "127.0.0.1:948$((2 * n + 1))", tls: { cert: $s/tls/keeper.crt, key: $s/tls/keeper.key, ca: $s/tls/ca.pem } }
database: { dsn_ref: "secretstore:secret/keeper" }
cache: { addr: "$REDIS_ADDR", password_ref: "secretstore:secret/keeper" }
secretstore:
  addr: "$STORE_ADDR"
  auth: { method: approle, role_id: keeper, secret_id_file: $s/approle-secret-id }
  scenario_auth: { method: approle, role_id: keeper-scenario, secret_id_file: $s/approle-scenario-secret-id }
  pki_mount: pki
  pki_role: soul
auth:
  jwt: { signing_key_ref: "secretstore:secret/keeper", issuer: keeper-prod, ttl_default: 24h, ttl_bootstrap: 720h }
temporal:
  address: "$FRONTEND"
  namespace: $NAMESPACE
  task_queue: keeper
  tls: { ca: $t/ca.pem, cert: $t/keeper.crt, key: $t/keeper.key, server_name: $TLS_NAME }
services: { cache_dir: $STATE/keeper-$name/services }
logging: { level: info }
EOF
}
keeper_ready() { curl -sf -o /dev/null "http://127.0.0.1:838$1/readyz"; }
start_keeper() {
  local name="$1" n="$2"
  if pid_alive "keeper-$name" && keeper_ready "$n"; then return 0; fi
  stop_pid "keeper-$name"
  nohup node "$ROOT/bin/keeper" run --config="$STATE/keeper-$name/keeper.yml" >>"$STATE/logs/keeper-$name.log" 2>&1 &
  echo $! >"$STATE/run/keeper-$name.pid"
  for _ in $(seq 1 240); do
    keeper_ready "$n" && { log "keeper prod-$name ready on 127.0.0.1:838$n"; return 0; }
    pid_alive "keeper-$name" || die "keeper prod-$name exited; see $STATE/logs/keeper-$name.log"
    sleep 0.5
  done
  die "keeper prod-$name not ready; see $STATE/logs/keeper-$name.log"
}
keepers() {
  keeper_config a 0
  keeper_config b 1
  # The documented operator step: the keeper's search attributes on its namespace.
  node "$ROOT/bin/keeper" temporal-setup --config="$STATE/keeper-a/keeper.yml" >&2
  if [ ! -s "$STATE/admin.jwt" ]; then
    node "$ROOT/bin/keeper" init --archon=admin --config="$STATE/keeper-a/keeper.yml" --credential-out="$STATE/admin.jwt" >&2
  fi
  # KEEPER_PROD_KEEPERS=packaged: the keepers are the .deb's, in Debian roots started by
  # test/prod/ (packaged-keepers.ts) on these ports; no keeper from dist/ may hold them.
  if [ "${KEEPER_PROD_KEEPERS:-dist}" = packaged ]; then
    stop_pid keeper-a
    stop_pid keeper-b
    return 0
  fi
  start_keeper a 0
  start_keeper b 1
}

up() {
  local t0=$SECONDS
  tools
  generated
  postgres
  certs
  start_temporal
  namespace
  start_store
  provision
  keepers
  {
    echo "TEMPORAL_ADDRESS=$FRONTEND"
    echo "TEMPORAL_NAMESPACE=$NAMESPACE"
    echo "TEMPORAL_TLS_DIR=$STATE/tls/temporal"
    echo "TEMPORAL_TLS_NAME=$TLS_NAME"
    echo "SECRETSTORE_ADDR=$STORE_ADDR"
    echo "SECRETSTORE_DIR=$STATE/store"
    echo "KEEPER_A=http://127.0.0.1:8380"
    echo "KEEPER_B=http://127.0.0.1:8381"
  } >"$STATE/env"
  log "rehearsal up in $((SECONDS - t0))s; state in $STATE (env: $STATE/env)"
}

status() {
  paths
  local rc=0
  line() { printf '%-18s %s\n' "$1" "$2"; }
  if [ -s "$STATE/tls/temporal/operator.crt" ] && temporal_healthy; then line temporal "up ($FRONTEND, mTLS)"; else line temporal down; rc=1; fi
  local st; st="$(store_status)"
  if [ -z "$st" ]; then line secretstore down; rc=1
  elif grep -q '"sealed": true' <<<"$st"; then line secretstore "sealed ($STORE_ADDR)"; rc=1
  else line secretstore "up ($STORE_ADDR)"; fi
  local body
  for k in a:0 b:1; do
    if keeper_ready "${k#*:}"; then
      # Ready needs only the database and the cache (issue 45): name what it runs without.
      local degraded
      degraded="$(curl -s -m 10 "http://127.0.0.1:838${k#*:}/readyz" | grep -o '"degraded": *\[[^]]*\]' | sed 's/"degraded": *\[//; s/\]$//; s/[" ]//g; s/,/, /g' || true)"
      line "keeper prod-${k%%:*}" "ready (127.0.0.1:838${k#*:}${degraded:+; degraded: $degraded})"
    elif body="$(curl -s -m 10 "http://127.0.0.1:838${k#*:}/readyz")" && [ -n "$body" ]; then
      line "keeper prod-${k%%:*}" "not ready: $body"; rc=1
    else line "keeper prod-${k%%:*}" down; rc=1; fi
  done
  return $rc
}

down() {
  stop_pid keeper-a
  stop_pid keeper-b
  stop_pid store
  stop_pid temporal
  log "stopped (data kept in $STATE and the temporal databases; purge removes them)"
}

purge() {
  down
  local db
  for db in temporal temporal_visibility keeper_prod; do as_postgres dropdb --if-exists "$db"; done
  as_postgres psql -q -d postgres -c "DROP ROLE IF EXISTS temporal" >/dev/null
  rm -rf "$STATE"
  log "purged"
}

# --- Outages local to the rehearsal (the stack's PostgreSQL and Redis serve other tests too).
# PostgreSQL: keeper_prod refuses new connections and its open ones are ended; no other database
# sees anything.
pg_block() {
  as_postgres psql -q -v ON_ERROR_STOP=1 -d postgres >/dev/null <<'SQL'
ALTER DATABASE keeper_prod WITH ALLOW_CONNECTIONS false;
SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'keeper_prod' AND pid <> pg_backend_pid();
SQL
}
pg_unblock() { as_postgres psql -q -d postgres -c "ALTER DATABASE keeper_prod WITH ALLOW_CONNECTIONS true" >/dev/null; }
# Redis: CLIENT KILL of the connections the given processes (the keepers' host PIDs) hold to it,
# found by their local ports; never CLIENT PAUSE, which would stop every client of the stack.
redis_kill() {
  local pid port n=0
  for pid in "$@"; do
    for port in $(ss -tnpH state established "dst $REDIS_ADDR" | grep "pid=$pid," | awk '{print $3}' | sed 's/.*://'); do
      REDISCLI_AUTH="$REDIS_PASSWORD" redis-cli -h "${REDIS_ADDR%:*}" -p "${REDIS_ADDR##*:}" CLIENT KILL ADDR "127.0.0.1:$port" >/dev/null
      n=$((n + 1))
    done
  done
  echo "$n"
}

case "${1:-}" in
  up) up ;;
  status) status ;;
  down) down ;;
  purge) purge ;;
  # Sealing needs a token with sudo on sys/seal: the rehearsal keeps the root token (a production
  # store revokes it after provisioning and seals with an operator's token).
  seal) paths; VAULT_TOKEN="$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).root_token)' "$STATE/store/init.json")" \
    store operator seal >/dev/null ;;
  unseal) paths; unseal ;;
  store) paths; generated; start_store; provision ;;
  temporal-stop) stop_pid temporal ;;
  temporal-start) tools; generated; start_temporal ;;
  pg-block) pg_block ;;
  pg-unblock) pg_unblock ;;
  redis-kill) shift; redis_kill "$@" ;;
  *) echo "usage: prod-rehearsal.sh up|status|down|purge|seal|unseal|temporal-stop|temporal-start|pg-block|pg-unblock|redis-kill PID..." >&2; exit 2 ;;
esac
