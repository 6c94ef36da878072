#!/usr/bin/env bash
# `make demo`: writes .stack/keeper.yml, creates the first operator into .stack/credential.jwt
# (once), (re)starts the keeper in the background and prints its URLs. Safe to run twice.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
STATE="${KEEPER_STACK_DIR:-$ROOT/.stack}"
CONFIG="$STATE/keeper.yml"
CRED="$STATE/credential.jwt"
cd "$ROOT"

# The demo's Temporal runs behind mutual TLS (`make demo` starts the stack with KEEPER_TEMPORAL_MTLS=1)
# and the keeper presents the stack's client certificate: scripts/stack.sh writes TEMPORAL_TLS_* into
# .stack/env then, and the files are under .stack/tls/temporal/. A stack already running Temporal
# without TLS (`make test` or `make stack` started it) is refused unless KEEPER_TEMPORAL_MTLS=0 says
# a plain Temporal is wanted.
TEMPORAL_TLS=""
if grep -q '^TEMPORAL_TLS_CA=' "$STATE/env" 2>/dev/null; then
  TEMPORAL_TLS=", tls: { ca: tls/temporal/ca.pem, cert: tls/temporal/client.crt, key: tls/temporal/client.key, server_name: temporal.keeper.local }"
elif [ "${KEEPER_TEMPORAL_MTLS:-1}" != 0 ]; then
  echo "demo: the stack's Temporal runs without TLS (started by make test or make stack): anyone on this machine could start" >&2
  echo "      workflows on the keeper's task queue. Stop it with 'make stack-down' and run make demo again (it starts" >&2
  echo "      Temporal behind mutual TLS), or run 'KEEPER_TEMPORAL_MTLS=0 make demo' for a plain Temporal." >&2
  exit 1
fi

cat > "$CONFIG" <<YAML
# Written by make demo. Production keeps the same shape; see docs/configuration.md.
kid: keeper-demo
listen:
  openapi: { addr: 127.0.0.1:8080 }
  metrics: { addr: 127.0.0.1:9090 }
  mcp: { addr: 127.0.0.1:8081 }
  grpc:
    bootstrap:
      addr: 127.0.0.1:9442
      tls: { cert: tls/keeper.crt, key: tls/keeper.key }
    event_stream:
      addr: 127.0.0.1:9443
      tls: { cert: tls/keeper.crt, key: tls/keeper.key, ca: tls/ca.pem }
database: { dsn_ref: "secretstore:secret/keeper" }
cache: { addr: 127.0.0.1:6379, password_ref: "secretstore:secret/keeper" }
secretstore:
  addr: http://127.0.0.1:8200
  auth: { method: approle, role_id: keeper, secret_id_file: approle-secret-id }
  # Scenario secrets and credential_refs: the second role, reading only secret/keeper/services/.
  scenario_auth: { method: approle, role_id: keeper-scenario, secret_id_file: approle-scenario-secret-id }
  pki_mount: pki
  pki_role: soul
auth:
  jwt:
    signing_key_ref: "secretstore:secret/keeper"
    issuer: keeper
    ttl_default: 24h
    ttl_bootstrap: 720h
temporal: { address: 127.0.0.1:7233, namespace: default, task_queue: keeper, ui_url: http://127.0.0.1:8233$TEMPORAL_TLS }
# The demo's example service is a git repository on this machine: file:// is allowed here only.
services: { cache_dir: services-cache, git: { schemes: [https, ssh, file], hosts: [] } }
logging: { level: info }
YAML

# The first operator: created whenever the demo database has none (a fresh machine, or a database
# dropped since), its credential replacing any older one; kept when operators exist.
rm -f "$CRED.new"
if out="$(bin/keeper init --archon=admin --config="$CONFIG" --credential-out="$CRED.new" 2>&1)"; then
  mv -f "$CRED.new" "$CRED"
  echo "$out"
elif ! grep -q 'registry is not empty' <<<"$out"; then
  echo "$out" >&2
  echo "demo: keeper init failed (above); retry with: make demo" >&2
  exit 1
elif [ ! -s "$CRED" ]; then
  echo "demo: the demo database already has operators but $CRED is gone; run 'make stack-down', drop the database with" >&2
  echo "      runuser -u postgres -- dropdb keeper   and run make demo again" >&2
  exit 1
fi

# Restart the keeper so it runs the code just built.
if [ -f "$STATE/keeper.pid" ] && kill -0 "$(cat "$STATE/keeper.pid")" 2>/dev/null; then
  kill "$(cat "$STATE/keeper.pid")"
  for _ in $(seq 1 100); do kill -0 "$(cat "$STATE/keeper.pid")" 2>/dev/null || break; sleep 0.1; done
fi
nohup bin/keeper run --config="$CONFIG" >>"$STATE/logs/keeper.log" 2>&1 &
echo $! > "$STATE/keeper.pid"
for _ in $(seq 1 150); do
  curl -fsS -o /dev/null http://127.0.0.1:8080/readyz 2>/dev/null && break
  kill -0 "$(cat "$STATE/keeper.pid")" 2>/dev/null || { echo "demo: the keeper exited; see $STATE/logs/keeper.log:" >&2; tail -5 "$STATE/logs/keeper.log" >&2; echo "demo: retry with: make demo" >&2; exit 1; }
  sleep 0.2
done
curl -fsS -o /dev/null http://127.0.0.1:8080/readyz || { echo "demo: the keeper is not ready; see $STATE/logs/keeper.log; retry with: make demo" >&2; exit 1; }

if [ -x scripts/demo-story.sh ]; then scripts/demo-story.sh; fi

# The Web UI has no authentication: behind mutual TLS the stack does not start it.
TEMPORAL_UI="http://127.0.0.1:8233"
[ -z "$TEMPORAL_TLS" ] || TEMPORAL_UI="off (Temporal runs behind mutual TLS; the temporal CLI with --tls-ca-path, --tls-cert-path, --tls-key-path from $STATE/tls/temporal/ and --tls-server-name temporal.keeper.local reaches it)"

cat <<TXT

Keeper is running (pid $(cat "$STATE/keeper.pid"), log $STATE/logs/keeper.log)
  Web UI            http://127.0.0.1:8080/ui
  API docs          http://127.0.0.1:8080/docs
  Readiness         http://127.0.0.1:8080/readyz
  Metrics           http://127.0.0.1:9090/metrics
  Temporal Web UI   $TEMPORAL_UI
  Operator token    $CRED   (paste it into /docs or /ui; export KEEPER_TOKEN=\$(cat $CRED))
Stop everything with: make stack-down
TXT
