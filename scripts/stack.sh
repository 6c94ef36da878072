#!/usr/bin/env bash
# The local stack: PostgreSQL, Redis, the secrets/PKI store (OpenBao, or Vault 1.14 as fallback) and the
# Temporal dev server, all on 127.0.0.1. Idempotent: what runs is left running, what is missing is
# installed or started. State (passwords, TLS files, logs, pids) lives in $KEEPER_STACK_DIR (.stack/).
#
#   scripts/stack.sh up | packages | down | status | redis-stop | redis-start
# (`packages` only installs the Debian packages, so `make` can run it beside the Go and npm builds.)
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
STATE="${KEEPER_STACK_DIR:-$ROOT/.stack}"
PG_VERSION="${PG_VERSION:-15}"
mkdir -p "$STATE/logs" "$STATE/tls"
chmod 700 "$STATE"

log() { echo "stack: $*" >&2; }
# Every failure names what failed and the log to read (in the message), then how to retry.
die() { echo "stack: error: $*" >&2; echo "stack: retry with: make stack (or the make command you ran)" >&2; exit 1; }

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
# From / : the postgres user may not enter the checkout's directory (psql would warn about it).
as_postgres() { (cd / && as_root runuser -u postgres -- "$@"); }

# --- secrets the stack generates once and keeps (so a restart of the in-memory store keeps tokens valid)
ensure_generated_secrets() {
  local f="$STATE/generated.env"
  if [ ! -s "$f" ]; then
    umask 077
    {
      echo "PG_PASSWORD=$(node -e 'process.stdout.write(require("crypto").randomBytes(18).toString("hex"))')"
      echo "REDIS_PASSWORD=$(node -e 'process.stdout.write(require("crypto").randomBytes(18).toString("hex"))')"
      echo "SIGNING_KEY=$(node -e 'process.stdout.write(require("crypto").randomBytes(32).toString("base64"))')"
      echo "BAO_ROOT_TOKEN=root-$(node -e 'process.stdout.write(require("crypto").randomBytes(12).toString("hex"))')"
    } > "$f.tmp"
    mv "$f.tmp" "$f"
  fi
  # shellcheck disable=SC1090
  . "$f"
}

# --- Debian packages
ensure_packages() {
  local missing=()
  command -v pg_ctlcluster >/dev/null 2>&1 || missing+=(postgresql)
  command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
  command -v git >/dev/null 2>&1 || missing+=(git)
  command -v openssl >/dev/null 2>&1 || missing+=(openssl)
  command -v unshare >/dev/null 2>&1 || missing+=(util-linux)
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  command -v ss >/dev/null 2>&1 || missing+=(iproute2)
  # Temporal behind mutual TLS: HAProxy terminates it, socat bridges to a dev server in its own
  # network namespace (test/support/temporal-mtls.ts; KEEPER_TEMPORAL_MTLS=1 below).
  [ -x /usr/sbin/haproxy ] || command -v haproxy >/dev/null 2>&1 || missing+=(haproxy)
  command -v socat >/dev/null 2>&1 || missing+=(socat)
  # Browser tests of /docs and /ui drive Debian's headless Chromium.
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
  # Push mode over SSH: the tests start real sshd instances (test/ssh) and make keys with ssh-keygen.
  { [ -x /usr/sbin/sshd ] && command -v ssh-keygen >/dev/null 2>&1; } || missing+=(openssh-server)
  if [ ${#missing[@]} -gt 0 ]; then
    local t0=$SECONDS apt_log="$STATE/logs/apt.log"
    log "installing Debian packages (first time only, about 2 minutes): ${missing[*]}; log: $apt_log"
    as_root apt-get update -qq >"$apt_log" 2>&1 \
      || { tail -n 15 "$apt_log" | sed 's/^/    /' >&2; die "apt-get update failed; see $apt_log"; }
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >>"$apt_log" 2>&1 \
      || { tail -n 15 "$apt_log" | sed 's/^/    /' >&2; die "apt-get install ${missing[*]} failed; see $apt_log"; }
    log "Debian packages installed in $((SECONDS - t0))s"
  fi
}

# --- PostgreSQL
start_postgres() {
  if ! pg_lsclusters -h 2>/dev/null | awk '{print $1" "$2}' | grep -q "^$PG_VERSION main$"; then
    as_root pg_createcluster "$PG_VERSION" main >/dev/null
  fi
  local conf="/etc/postgresql/$PG_VERSION/main/postgresql.conf"
  grep -q "^listen_addresses = '127.0.0.1'" "$conf" || echo "listen_addresses = '127.0.0.1'" | as_root tee -a "$conf" >/dev/null
  grep -q "^port = 5432" "$conf" || as_root sed -i 's/^port = .*/port = 5432/' "$conf"
  grep -q "^max_connections = 300" "$conf" || echo "max_connections = 300" | as_root tee -a "$conf" >/dev/null
  if ! pg_isready -q -h 127.0.0.1 -p 5432; then
    as_root pg_ctlcluster "$PG_VERSION" main start || die "PostgreSQL did not start; see /var/log/postgresql/"
    for _ in $(seq 1 50); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.2; done
    pg_isready -q -h 127.0.0.1 -p 5432 || die "PostgreSQL is not answering on 127.0.0.1:5432"
  fi
  # The keeper role may create databases: the tests give each suite its own database.
  as_postgres psql -q -v ON_ERROR_STOP=1 -d postgres >/dev/null <<SQL
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'keeper') THEN
    CREATE ROLE keeper LOGIN CREATEDB PASSWORD '$PG_PASSWORD';
  ELSE
    ALTER ROLE keeper LOGIN CREATEDB PASSWORD '$PG_PASSWORD';
  END IF;
END \$\$;
SQL
  if ! as_postgres psql -tAq -d postgres -c "SELECT 1 FROM pg_database WHERE datname='keeper'" | grep -q 1; then
    as_postgres createdb -O keeper keeper
  fi
}

# The pid listening on a loopback TCP port, if any.
port_pid() { ss -ltnpH "sport = :$1" 2>/dev/null | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1; }

# A dev service left by another checkout (other passwords, other root token) holds a port this stack
# needs: stop it, saying so, rather than failing. Only processes of the named program are touched.
stop_stale() {
  local port="$1" program="$2" pid
  pid="$(port_pid "$port")"
  [ -n "$pid" ] || return 0
  # comm, not the exe path: Debian's redis-server is a link to redis-check-rdb.
  if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "${program:0:15}" ]; then
    log "stopping a stale $program (pid $pid) that holds port $port with other credentials"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  else
    die "port $port is taken by another program (pid $pid); free it and retry"
  fi
}

# --- Redis
redis_ping() { redis-cli -h 127.0.0.1 -p 6379 --no-auth-warning -a "$REDIS_PASSWORD" ping 2>/dev/null | grep -q PONG; }

start_redis() {
  redis_ping && return 0
  # A Debian-started redis without our password, or another checkout's, would hold the port.
  if redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; then
    redis-cli -h 127.0.0.1 -p 6379 shutdown nosave >/dev/null 2>&1 || true
    sleep 0.3
  fi
  stop_stale 6379 redis-server
  umask 077
  cat > "$STATE/redis.conf" <<EOF
bind 127.0.0.1
port 6379
daemonize yes
pidfile $STATE/redis.pid
logfile $STATE/logs/redis.log
dir $STATE
save ""
appendonly no
requirepass $REDIS_PASSWORD
EOF
  redis-server "$STATE/redis.conf" || die "redis-server did not start; see $STATE/logs/redis.log"
  for _ in $(seq 1 50); do redis_ping && return 0; sleep 0.1; done
  die "Redis is not answering on 127.0.0.1:6379; see $STATE/logs/redis.log"
}

stop_redis() {
  redis-cli -h 127.0.0.1 -p 6379 --no-auth-warning -a "$REDIS_PASSWORD" shutdown nosave >/dev/null 2>&1 || true
  for _ in $(seq 1 50); do redis_ping || return 0; sleep 0.1; done
}

# --- Temporal dev server
TEMPORAL_SEARCH_ATTRIBUTES=(KeeperIncarnation=Keyword KeeperOperation=Keyword KeeperServiceRef=Keyword KeeperService=Keyword)
# The dev server's SQLite: a write-ahead log synced at checkpoints, not every write synced through a
# rollback journal (its default). A killed server loses nothing (the fault tests kill it); a power
# cut may lose its last transactions, which a development stack accepts. The dev server's CPU per
# one-host run: 0.12 -> 0.07 s (docs/performance.md). Production Temporal runs on its own database.
TEMPORAL_SQLITE_PRAGMAS=(journal_mode=wal synchronous=normal)

# Behind mutual TLS when KEEPER_TEMPORAL_MTLS=1 (`make demo` sets it unless told 0; `make stack` and
# `make test` leave it off; the cost is in docs/security.md): the dev server then runs in a network
# and PID namespace of its own, where nothing else can reach it; socat bridges a 0600 Unix socket
# to it and HAProxy on 127.0.0.1:7233 admits only clients with a certificate from
# .stack/tls/temporal/ca.pem (the keeper's client.crt).
# The Web UI is off in that mode: it would be a door without a certificate.
TEMPORAL_MTLS="${KEEPER_TEMPORAL_MTLS:-0}"
TEMPORAL_TLS_DIR="$STATE/tls/temporal"
TEMPORAL_TLS_NAME=temporal.keeper.local
TEMPORAL_TLS_ARGS=()
if [ "$TEMPORAL_MTLS" = 1 ]; then
  TEMPORAL_TLS_ARGS=(--tls-ca-path "$TEMPORAL_TLS_DIR/ca.pem" --tls-cert-path "$TEMPORAL_TLS_DIR/client.crt"
    --tls-key-path "$TEMPORAL_TLS_DIR/client.key" --tls-server-name "$TEMPORAL_TLS_NAME")
fi

temporal_healthy() { "$TEMPORAL" operator cluster health --address 127.0.0.1:7233 "${TEMPORAL_TLS_ARGS[@]}" >/dev/null 2>&1; }
temporal_plain_healthy() { "$TEMPORAL" operator cluster health --address 127.0.0.1:7233 >/dev/null 2>&1; }
temporal_mtls_healthy() {
  [ -s "$TEMPORAL_TLS_DIR/client.crt" ] || return 1
  "$TEMPORAL" operator cluster health --address 127.0.0.1:7233 --tls-ca-path "$TEMPORAL_TLS_DIR/ca.pem" --tls-cert-path "$TEMPORAL_TLS_DIR/client.crt" \
    --tls-key-path "$TEMPORAL_TLS_DIR/client.key" --tls-server-name "$TEMPORAL_TLS_NAME" >/dev/null 2>&1
}

# A running dev server of this stack keeps the mode it was started in (only stack-down and up change
# it), and .stack/env must say that mode, whatever KEEPER_TEMPORAL_MTLS asks this time: `make demo`
# asks for mTLS, `make test` does not, and either may find the other's server running.
keep_running_temporal_mode() {
  local running=0
  temporal_mtls_healthy && running=1
  if [ "$running" != "$TEMPORAL_MTLS" ]; then
    if [ "$running" = 1 ]; then log "Temporal already runs behind mutual TLS; kept (KEEPER_TEMPORAL_MTLS=$TEMPORAL_MTLS applies after make stack-down)"
    else log "Temporal already runs without TLS; kept (KEEPER_TEMPORAL_MTLS=$TEMPORAL_MTLS applies after make stack-down)"; fi
  fi
  TEMPORAL_MTLS="$running"
  TEMPORAL_TLS_ARGS=()
  if [ "$running" = 1 ]; then
    TEMPORAL_TLS_ARGS=(--tls-ca-path "$TEMPORAL_TLS_DIR/ca.pem" --tls-cert-path "$TEMPORAL_TLS_DIR/client.crt"
      --tls-key-path "$TEMPORAL_TLS_DIR/client.key" --tls-server-name "$TEMPORAL_TLS_NAME")
  fi
}

# A CA, the frontend's certificate and the keeper's client certificate, made once (EC P-256).
ensure_temporal_certs() {
  local d="$TEMPORAL_TLS_DIR"
  [ -s "$d/client.crt" ] && [ -s "$d/server.pem" ] && return 0
  mkdir -p "$d" && chmod 700 "$d"
  (
    cd "$d" && umask 077
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 3650 \
      -subj /CN=keeper-temporal-ca -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
    printf 'subjectAltName=DNS:%s\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n' "$TEMPORAL_TLS_NAME" > server.ext
    printf 'extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n' > client.ext
    for leaf in server client; do
      cn=keeper; [ "$leaf" = server ] && cn="$TEMPORAL_TLS_NAME"
      openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$leaf.key" -out "$leaf.csr" -subj "/CN=$cn"
      openssl x509 -req -in "$leaf.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 825 -out "$leaf.crt" -extfile "$leaf.ext"
    done
    cat server.crt server.key > server.pem
  ) >"$STATE/logs/temporal-certs.log" 2>&1 || die "making the Temporal TLS certificates failed; see $STATE/logs/temporal-certs.log"
}

start_temporal_mtls() {
  local sa=("$@") sock="$TEMPORAL_TLS_DIR/frontend.sock" cfg="$STATE/temporal-haproxy.cfg"
  temporal_plain_healthy && die "a Temporal dev server without TLS holds 127.0.0.1:7233; run make stack-down first"
  ensure_temporal_certs
  # The socket path and the server's argv are positional parameters, never spliced into the script.
  nohup unshare --net --pid --fork --kill-child -- sh -c \
    'ip link set lo up || exit 1; sock="$1"; shift; socat "UNIX-LISTEN:$sock,fork,mode=600,unlink-early" TCP:127.0.0.1:7233 & exec "$@"' \
    sh "$sock" "$TEMPORAL" server start-dev --ip 127.0.0.1 --port 7233 --headless \
    --db-filename "$STATE/temporal.db" --log-level warn "${sa[@]}" >"$STATE/logs/temporal.log" 2>&1 &
  echo $! > "$STATE/temporal.pid"
  printf '%s\n' 'global' '  maxconn 4096' 'defaults' '  mode tcp' '  timeout connect 5s' '  timeout client 1h' '  timeout server 1h' \
    'frontend temporal' \
    "  bind 127.0.0.1:7233 ssl crt $TEMPORAL_TLS_DIR/server.pem ca-file $TEMPORAL_TLS_DIR/ca.pem verify required alpn h2" \
    '  default_backend dev' 'backend dev' "  server dev $sock" > "$cfg"
  nohup /usr/sbin/haproxy -f "$cfg" -db >"$STATE/logs/temporal-proxy.log" 2>&1 &
  echo $! > "$STATE/temporal-proxy.pid"
  for _ in $(seq 1 150); do temporal_healthy && return 0; sleep 0.2; done
  die "the Temporal frontend did not become healthy behind mTLS on 127.0.0.1:7233; see $STATE/logs/temporal.log and temporal-proxy.log"
}

# The dev server of this checkout's stack (its database is $STATE/temporal.db), if one runs.
own_temporal_pids() { pgrep -f -- "--db-filename $STATE/temporal.db" 2>/dev/null || true; }

start_temporal() {
  TEMPORAL="$("$ROOT/scripts/build-tools.sh" path-temporal)"
  if temporal_plain_healthy || temporal_mtls_healthy; then
    # Reuse a healthy server only if it is this stack's: one left by another checkout (a removed
    # clone, say) answers health checks while its deleted database fails every workflow call.
    [ -n "$(own_temporal_pids)" ] && { keep_running_temporal_mode; return 0; }
    die "a Temporal server that is not this stack's holds 127.0.0.1:7233 (another checkout's? see: pgrep -af 'temporal server'); stop it (scripts/stack.sh down in that checkout, or kill it) and retry"
  fi
  local sa=()
  for a in "${TEMPORAL_SEARCH_ATTRIBUTES[@]}"; do sa+=(--search-attribute "$a"); done
  for p in "${TEMPORAL_SQLITE_PRAGMAS[@]}"; do sa+=(--sqlite-pragma "$p"); done
  if [ "$TEMPORAL_MTLS" = 1 ]; then start_temporal_mtls "${sa[@]}"; return; fi
  nohup "$TEMPORAL" server start-dev --ip 127.0.0.1 --port 7233 --ui-port 8233 \
    --db-filename "$STATE/temporal.db" --log-level warn "${sa[@]}" \
    >"$STATE/logs/temporal.log" 2>&1 &
  echo $! > "$STATE/temporal.pid"
  for _ in $(seq 1 150); do temporal_healthy && return 0; sleep 0.2; done
  die "the Temporal dev server did not become healthy on 127.0.0.1:7233; see $STATE/logs/temporal.log"
}

# --- Secrets/PKI store in dev mode (in memory: provisioning runs again after every restart)
bao_healthy() { curl -fsS -o /dev/null "http://127.0.0.1:8200/v1/sys/health" 2>/dev/null; }

start_bao() {
  BAO="$("$ROOT/scripts/build-tools.sh" path-bao)"
  if bao_healthy; then
    curl -fsS -o /dev/null -H "X-Vault-Token: $BAO_ROOT_TOKEN" http://127.0.0.1:8200/v1/auth/token/lookup-self 2>/dev/null \
      && return 0
    stop_stale 8200 "$(basename "$BAO")"
  fi
  nohup "$BAO" server -dev -dev-root-token-id="$BAO_ROOT_TOKEN" -dev-listen-address=127.0.0.1:8200 \
    -dev-no-store-token >"$STATE/logs/secretstore.log" 2>&1 &
  echo $! > "$STATE/secretstore.pid"
  for _ in $(seq 1 100); do bao_healthy && return 0; sleep 0.1; done
  die "the secrets store did not start on 127.0.0.1:8200; see $STATE/logs/secretstore.log"
}

stop_pidfile() {
  local f="$1"
  [ -f "$f" ] || return 0
  local pid; pid="$(cat "$f")"
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

write_env() {
  umask 077
  cat > "$STATE/env" <<EOF
STACK_DIR=$STATE
PG_HOST=127.0.0.1
PG_PORT=5432
PG_USER=keeper
PG_PASSWORD=$PG_PASSWORD
REDIS_ADDR=127.0.0.1:6379
REDIS_PASSWORD=$REDIS_PASSWORD
SECRETSTORE_ADDR=http://127.0.0.1:8200
SECRETSTORE_ROOT_TOKEN=$BAO_ROOT_TOKEN
TEMPORAL_ADDRESS=127.0.0.1:7233
TEMPORAL_UI=http://127.0.0.1:8233
EOF
  if [ "$TEMPORAL_MTLS" = 1 ]; then
    printf '%s\n' "TEMPORAL_TLS_CA=$TEMPORAL_TLS_DIR/ca.pem" "TEMPORAL_TLS_CERT=$TEMPORAL_TLS_DIR/client.crt" \
      "TEMPORAL_TLS_KEY=$TEMPORAL_TLS_DIR/client.key" "TEMPORAL_TLS_SERVER_NAME=$TEMPORAL_TLS_NAME" >> "$STATE/env"
  fi
}

cmd_up() {
  ensure_packages
  ensure_generated_secrets
  "$ROOT/scripts/build-tools.sh" all || exit 1
  start_postgres
  start_redis
  start_bao
  start_temporal
  write_env
  node "$ROOT/scripts/provision-secretstore.js" "$STATE" || die "provisioning the secrets store failed"
  if [ "$TEMPORAL_MTLS" = 1 ]; then
    log "up: PostgreSQL 127.0.0.1:5432, Redis 127.0.0.1:6379, secrets store http://127.0.0.1:8200, Temporal 127.0.0.1:7233 (mutual TLS: CA and client certificate in $TEMPORAL_TLS_DIR; no Web UI)"
  else
    log "up: PostgreSQL 127.0.0.1:5432, Redis 127.0.0.1:6379, secrets store http://127.0.0.1:8200, Temporal 127.0.0.1:7233 (UI http://127.0.0.1:8233)"
  fi
}

cmd_down() {
  ensure_generated_secrets
  stop_pidfile "$STATE/keeper.pid"
  for p in "$STATE"/soul-*.pid; do [ -e "$p" ] && stop_pidfile "$p"; done
  stop_pidfile "$STATE/temporal-proxy.pid"
  # Behind mTLS the pid file holds `unshare`, which waits out SIGTERM: the dev server is its child.
  # (Without mTLS the dev server itself is in the pid file and has no children: nothing happens.)
  [ ! -f "$STATE/temporal.pid" ] || pkill -TERM -P "$(cat "$STATE/temporal.pid")" 2>/dev/null || true
  stop_pidfile "$STATE/temporal.pid"
  # A dev server of this stack without (or with a stale) pid file: found by its database path.
  local t
  for t in $(own_temporal_pids); do
    kill "$t" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$t" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$t" 2>/dev/null || true
  done
  stop_pidfile "$STATE/secretstore.pid"
  stop_redis
  if command -v pg_ctlcluster >/dev/null 2>&1 && pg_isready -q -h 127.0.0.1 -p 5432; then
    as_root pg_ctlcluster "$PG_VERSION" main stop || true
  fi
  log "down"
}

cmd_status() {
  ensure_generated_secrets
  TEMPORAL="$("$ROOT/scripts/build-tools.sh" path-temporal)"
  pg_isready -q -h 127.0.0.1 -p 5432 && echo "postgresql: up" || echo "postgresql: down"
  redis_ping && echo "redis: up" || echo "redis: down"
  bao_healthy && echo "secretstore: up" || echo "secretstore: down"
  temporal_healthy && echo "temporal: up" || echo "temporal: down"
}

case "${1:-up}" in
  up) cmd_up ;;
  packages) ensure_packages ;;
  down) cmd_down ;;
  status) cmd_status ;;
  redis-stop) ensure_generated_secrets; stop_redis ;;
  redis-start) ensure_generated_secrets; start_redis ;;
  *) echo "usage: scripts/stack.sh up|packages|down|status|redis-stop|redis-start" >&2; exit 2 ;;
esac
