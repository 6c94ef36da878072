#!/usr/bin/env bash
# The demo's story, run by scripts/demo.sh once the keeper is ready: three souls on this machine
# (each `soul` in its own UTS namespace with its own host name), the example service `motd` from a
# local git repository, and one incarnation of it applied to all three. Safe to run again: whatever
# exists already (souls, identities, running souls, the service, the incarnation) is kept.
# JSON goes through `node -e` (no jq); the operator token is sent as a header read from a file
# descriptor, so it is never printed nor on a command line.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
STATE="${KEEPER_STACK_DIR:-$ROOT/.stack}"
API=http://127.0.0.1:8080
CRED="$STATE/credential.jwt"
DEMO_FILES="$STATE/demo-files"
SERVICE=motd
TAG=v1
INCARNATION=motd-demo
SOULS=(soul-1.demo.keeper.test soul-2.demo.keeper.test soul-3.demo.keeper.test)
COVENS=(web web db)
cd "$ROOT"
mkdir -p "$STATE/logs" "$STATE/souls"

say() { echo "demo: $*"; }
die() { echo "demo: $*" >&2; echo "demo: retry with: make demo" >&2; exit 1; }

# api METHOD PATH [JSON]: sets $CODE (the HTTP status) and $body (the answer). Not in a subshell,
# so both reach the caller.
OUT="$(mktemp)"
trap 'rm -f "$OUT"' EXIT
api() {
  CODE="$(curl -sS -o "$OUT" -w '%{http_code}' -X "$1" -H @<(printf 'Authorization: Bearer %s\n' "$(cat "$CRED")") \
    ${3:+-H 'Content-Type: application/json' --data-binary "$3"} "$API$2")" || die "cannot reach the keeper at $API"
  body="$(cat "$OUT")"
}

# json EXPR: evaluates EXPR with `d` bound to the JSON document on stdin and prints the result.
json() { node -e 'let s="";process.stdin.on("data",c=>s+=c).on("end",()=>{const d=s?JSON.parse(s):null;const v=('"$1"');if(v!==undefined&&v!==null)process.stdout.write(typeof v==="string"?v:JSON.stringify(v));});'; }

running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# --- souls: registered, configured, onboarded, running, connected ----------------------------------
for i in "${!SOULS[@]}"; do
  sid="${SOULS[$i]}"; n=$((i + 1)); dir="$STATE/souls/$sid"
  mkdir -p "$dir"
  cat > "$dir/soul.yml" <<YAML
# Written by make demo (scripts/demo-story.sh).
sid: $sid
paths: { seed: $dir/seed, modules: $dir/modules }
keeper:
  endpoints: [{ host: localhost, bootstrap_port: 9442, event_stream_port: 9443, priority: 10 }]
  tls: { ca: $STATE/tls/ca.pem }
YAML
  token=""
  onboarded=""
  api GET "/v1/souls/$sid"
  [ "$CODE" = 200 ] && onboarded="$(json d.onboarded_at <<<"$body")"
  if [ "$CODE" = 404 ]; then
    api POST /v1/souls "{\"sid\":\"$sid\",\"transport\":\"agent\",\"covens\":[\"${COVENS[$i]}\"]}"
    [ "$CODE" = 201 ] || die "POST /v1/souls $sid: $CODE $body"
    token="$(json d.bootstrap_token <<<"$body")"
    say "registered $sid (coven ${COVENS[$i]})"
  elif [ "$CODE" != 200 ]; then
    die "GET /v1/souls/$sid: $CODE $body"
  fi
  # An identity left by an earlier demo database (dropped, or reset by another checkout's stack on
  # the same PostgreSQL) belongs to a registry that no longer onboarded this soul: the keeper
  # refuses it, so it goes, with the soul process that holds it, and the soul is onboarded again.
  if [ -z "$onboarded" ] && [ -d "$dir/seed" ]; then
    if running "$STATE/soul-$n.pid"; then
      kill "$(cat "$STATE/soul-$n.pid")" 2>/dev/null || true
      for _ in $(seq 1 100); do running "$STATE/soul-$n.pid" || break; sleep 0.1; done
      running "$STATE/soul-$n.pid" && die "$sid (pid $(cat "$STATE/soul-$n.pid")) did not stop; stop it and retry: make demo"
      rm -f "$STATE/soul-$n.pid"
    fi
    rm -rf "$dir/seed"
    say "$sid: its identity is from an earlier demo database; onboarding it again"
  fi
  # The identity is key.pem, cert.pem and chain.pem under paths.seed (agent/identity.ts).
  if [ ! -f "$dir/seed/key.pem" ] && [ ! -f "$dir/seed/cert.pem" ] && [ ! -f "$dir/seed/chain.pem" ]; then
    if [ -z "$token" ]; then
      # Registered earlier but its identity is gone (or it was never onboarded): a fresh token.
      api POST "/v1/souls/$sid/issue-token" '{"force":true}'
      [ "$CODE" = 201 ] || die "POST /v1/souls/$sid/issue-token: $CODE $body"
      token="$(json d.bootstrap_token <<<"$body")"
    fi
    # The token reaches `soul init` through its environment only.
    SOUL_BOOTSTRAP_TOKEN="$token" unshare --uts sh -c 'hostname "$0" && exec node "$@"' "$sid" bin/soul init --config="$dir/soul.yml" \
      >>"$STATE/logs/soul-$n.log" 2>&1 || { tail -5 "$STATE/logs/soul-$n.log" >&2; die "soul init $sid failed; see $STATE/logs/soul-$n.log"; }
    say "onboarded $sid"
  fi
  token=""
  if running "$STATE/soul-$n.pid"; then
    say "$sid is running (pid $(cat "$STATE/soul-$n.pid"))"
  else
    # unshare and sh exec into node, so $! is the soul's own pid (what stack.sh down stops). The
    # node flags are the soul package's own (packaging/soul/node-flags: its idle footprint).
    # shellcheck disable=SC2046
    nohup unshare --uts sh -c 'hostname "$0" && exec node "$@"' "$sid" $(cat packaging/soul/node-flags) bin/soul run --config="$dir/soul.yml" \
      >>"$STATE/logs/soul-$n.log" 2>&1 </dev/null &
    echo $! > "$STATE/soul-$n.pid"
    say "started $sid (pid $!, log $STATE/logs/soul-$n.log)"
  fi
done

for i in "${!SOULS[@]}"; do
  sid="${SOULS[$i]}"; status=""
  for _ in $(seq 1 300); do
    api GET "/v1/souls/$sid"; status="$(json d.status <<<"$body")"
    [ "$status" = connected ] && break
    running "$STATE/soul-$((i + 1)).pid" || die "$sid exited; see $STATE/logs/soul-$((i + 1)).log"
    sleep 0.2
  done
  [ "$status" = connected ] || die "$sid is $status, not connected, after 60 s; see $STATE/logs/soul-$((i + 1)).log"
done
say "souls connected: ${SOULS[*]}"

# --- the service: test/fixtures/services/motd as a local git repository, tagged ---------------------
SRC="$STATE/services-src/$SERVICE"
if [ ! -d "$SRC/.git" ]; then
  mkdir -p "$SRC"
  cp -R test/fixtures/services/motd/. "$SRC/"
  # The three demo souls share this machine's disk: each host writes under <root>/<its fqdn>/.
  sed -i 's|\${input.root}/etc/|${input.root}/${soulprint.self.fqdn}/etc/|' "$SRC"/scenario/*/main.yml
  git -C "$SRC" init -q
  git -C "$SRC" add -A
  git -C "$SRC" -c user.name=demo -c user.email=demo@keeper.test commit -q -m "motd for make demo"
  git -C "$SRC" tag "$TAG"
fi
api GET "/v1/services/$SERVICE"
if [ "$CODE" = 404 ]; then
  api POST /v1/services "{\"name\":\"$SERVICE\",\"git\":\"file://$SRC\",\"ref\":\"$TAG\"}"
  [ "$CODE" = 201 ] || die "POST /v1/services: $CODE $body"
  say "registered service $SERVICE (file://$SRC at $TAG)"
fi

# --- the incarnation ------------------------------------------------------------------------------
INPUT="{\"root\":\"$DEMO_FILES\",\"message\":\"Hello from make demo\",\"package\":\"git\"}"
api GET "/v1/incarnations/$INCARNATION"
if [ "$CODE" = 404 ]; then
  api POST /v1/incarnations "{\"name\":\"$INCARNATION\",\"service\":\"$SERVICE\",\"covens\":[\"web\",\"db\"],\"input\":$INPUT}"
  [ "$CODE" = 202 ] || die "POST /v1/incarnations: $CODE $body"
  say "created incarnation $INCARNATION (run $(json d.apply_id <<<"$body"))"
elif [ "$(json d.status <<<"$body")" = error_locked ]; then
  # Left locked by an earlier demo: run the failed operation again.
  api POST "/v1/incarnations/$INCARNATION/unlock" '{"retry":true}'
  [ "$CODE" = 202 ] || die "unlock $INCARNATION: $CODE $body"
  say "$INCARNATION was error_locked: retrying (run $(json d.apply_id <<<"$body"))"
fi

last=""
for _ in $(seq 1 600); do
  api GET "/v1/incarnations/$INCARNATION"
  status="$(json d.status <<<"$body")"
  line="$status $(json '(d.last_run&&d.last_run.summary&&d.last_run.summary.hosts)?Object.entries(d.last_run.summary.hosts).filter(([,n])=>n>0).map(([k,n])=>k+"="+n).join(" "):""' <<<"$body")"
  [ "$line" != "$last" ] && say "$INCARNATION: $line"
  last="$line"
  [ "$status" = applying ] || break
  sleep 0.5
done
if [ "$status" = error_locked ]; then
  apply_id="$(json 'd.apply_id||(d.last_run&&d.last_run.apply_id)' <<<"$body")"
  api GET "/v1/incarnations/$INCARNATION/runs/$apply_id"; report="$body"
  echo "demo: the run $apply_id failed:" >&2
  json '[d.error,...(d.render_errors||[]).map(e=>e.file+":"+e.line+":"+e.col+" "+e.rule+": "+e.message),...d.hosts.flatMap(h=>h.steps.filter(s=>s.status==="failed"||s.status==="unknown").map(s=>h.sid+" step "+s.index+" ("+s.name+") "+s.status+": "+s.output)),...d.hosts.filter(h=>h.reason).map(h=>h.sid+": "+h.reason)].filter(Boolean).join("\n")' <<<"$report" >&2
  echo "demo: the keeper's log is $STATE/logs/keeper.log; fix the service and retry with: make demo" >&2
  exit 1
fi
[ "$status" = ready ] || die "$INCARNATION is still $status after 5 minutes"

cat <<TXT

Demo incarnation $INCARNATION is ready: service $SERVICE@$TAG on ${SOULS[*]}
  Incarnation       $API/ui/incarnations/$INCARNATION   (API: $API/v1/incarnations/$INCARNATION)
  Rendered files    $DEMO_FILES/<soul>/etc/motd, e.g. $DEMO_FILES/${SOULS[0]}/etc/motd
  Souls             configs and identities under $STATE/souls/, logs $STATE/logs/soul-{1,2,3}.log
TXT
