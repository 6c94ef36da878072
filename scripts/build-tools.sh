#!/usr/bin/env bash
# Builds the Go tools of the local stack (the Temporal CLI and the secrets store) from their Go
# modules into a cache outside the repo, and reuses them only when they are proven to work.
#
#   scripts/build-tools.sh [all]          build what is missing or unusable (both tools in parallel)
#   scripts/build-tools.sh temporal|bao   one tool
#   scripts/build-tools.sh path-temporal|path-bao
#                                         print the tool's path (after `all`)
#   scripts/build-tools.sh check temporal|bao
#                                         exit 0 if the cached tool is usable, else print why (exit 1)
#   scripts/build-tools.sh key            print the recipe key the cache directories carry
#
# Cache layout: $KEEPER_TOOLS (default ~/.cache/keeper-tools)/<name>-<version>-<recipe key>/<binary>.
# The recipe key hashes this script (the whole recipe lives in it) and the Go version, so any change
# to a recipe lands in a new directory and is built from scratch on the next `make test`, in CI too:
# that is how CI proves the first-time path whenever it could have changed.
#
# Progress: one line per stage on stderr, with elapsed time. The Go output (`go: downloading ...`,
# compiler errors) goes to $KEEPER_STACK_DIR/logs/build-<tool>.log and is shown only on failure.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TOOLS="${KEEPER_TOOLS:-$HOME/.cache/keeper-tools}"
LOGDIR="${KEEPER_TOOLS_LOG_DIR:-${KEEPER_STACK_DIR:-$ROOT/.stack}/logs}"
# How long the first build takes on this project's 2-core machines (measured, docs/stack.md):
# alone, or side by side with the other tool (the default, faster in total).
TEMPORAL_VERSION=1.5.1
TEMPORAL_ESTIMATE="about 5 minutes on 2 cores"
TEMPORAL_ESTIMATE_BESIDE="about 9 minutes on 2 cores, built beside the secrets store"
BAO_VERSION=2.6.2
BAO_COMMIT=dd9c19c37a878cf4a81b18efb8d6f0599c7da923
# Fallback when the Go module proxy refuses github.com/openbao/openbao (it answers 403 for every
# version on this workplace's proxy): Vault 1.13.0, the MPL-2.0 line OpenBao forked from. Same HTTP
# API for KV v1/v2, PKI and AppRole, same dev-mode flags. Later Vault versions do not build against
# any published sdk tag. See docs/stack.md.
VAULT_VERSION=1.13.0
VAULT_SDK=v0.8.1
VAULT_ESTIMATE="about 6 minutes on 2 cores"
VAULT_ESTIMATE_BESIDE="about 9 minutes on 2 cores, built beside the Temporal dev server"
# -s -w: no symbol table or DWARF. The tools are never debugged here; the binaries are about a third
# smaller and link faster.
LDFLAGS_COMMON="-s -w"
export GOFLAGS="${GOFLAGS:-} -mod=mod"
export CGO_ENABLED=0

START=$SECONDS
say() { echo "build-tools: $*" >&2; }
elapsed() { local s=$((SECONDS - ${1:-$START})); printf '%dm%02ds' $((s / 60)) $((s % 60)); }

# Go's usual install place, also when a login shell did not put it on PATH (the key needs it too).
command -v go >/dev/null 2>&1 || { [ -x /usr/local/go/bin/go ] && export PATH="/usr/local/go/bin:$PATH"; } || true

need_go() {
  command -v go >/dev/null 2>&1 && return 0
  say "error: Go is not installed; install Go 1.22+ (it builds the Temporal CLI and the secrets store), then retry: make stack"
  exit 2
}

recipe_key() {
  local gover=""
  command -v go >/dev/null 2>&1 && gover="$(go env GOVERSION 2>/dev/null || true)"
  { cat "$ROOT/scripts/build-tools.sh"; echo "$gover"; } | sha256sum | cut -c1-12
}

KEY=""
key() { [ -n "$KEY" ] || KEY="$(recipe_key)"; echo "$KEY"; }

temporal_bin() { echo "$TOOLS/temporal-$TEMPORAL_VERSION-$(key)/temporal"; }
openbao_bin() { echo "$TOOLS/openbao-$BAO_VERSION-$(key)/bao"; }
vault_bin() { echo "$TOOLS/vault-$VAULT_VERSION-$(key)/vault"; }

# Runs a candidate binary the way the stack will and checks that it reports the expected version.
# Prints nothing when it works; otherwise the reason on stdout.
prove() {
  local bin="$1" want="$2" out
  shift 2
  if [ -L "$bin" ] && [ ! -e "$bin" ]; then echo "$bin is a dangling link"; return 1; fi
  if [ -d "$bin" ]; then echo "$bin is a directory, not a program"; return 1; fi
  if [ ! -e "$bin" ]; then echo "$bin does not exist"; return 1; fi
  if [ ! -f "$bin" ]; then echo "$bin is not a regular file"; return 1; fi
  if [ ! -s "$bin" ]; then echo "$bin is empty"; return 1; fi
  if [ ! -x "$bin" ]; then echo "$bin is not executable"; return 1; fi
  if ! out="$(timeout 20 "$bin" "$@" 2>&1)"; then
    echo "$bin does not run ('$(basename "$bin") $*' failed: $(head -c 200 <<<"$out" | tr '\n' ' '))"; return 1
  fi
  if ! grep -qF -- "$want" <<<"$out"; then
    echo "$bin reports '$(head -1 <<<"$out")', not version $want"; return 1
  fi
}
prove_temporal() { prove "$1" "$TEMPORAL_VERSION" --version; }
prove_bao() { prove "$1" "v$BAO_VERSION" version; }
prove_vault() { prove "$1" "v$VAULT_VERSION" version; }

# check <tool>: is the cached tool usable? Exit 0 silently, or print why and exit 1.
check_tool() {
  local why
  case "$1" in
    temporal) why="$(prove_temporal "$(temporal_bin)")" || { echo "$why"; return 1; } ;;
    bao)
      why="$(prove_bao "$(openbao_bin)")" && return 0
      local why2; why2="$(prove_vault "$(vault_bin)")" && return 0
      echo "$why; $why2"; return 1 ;;
    *) echo "unknown tool $1"; return 2 ;;
  esac
}

# Go output of a stage goes to the tool's log; on failure the last lines are shown with the log's path.
# A long stage says every two minutes that it is still at work, so a first run never looks hung.
run_logged() {
  local log="$1"; shift
  local what="${STAGE:-$1}" t0=$SECONDS ticker rc=0
  # The sleep is killed with the ticker: a sleeping child would hold the terminal's pipe open.
  ( trap 'kill "$s" 2>/dev/null; exit 0' TERM
    while :; do sleep 120 & s=$!; wait "$s"; say "still $what ($(elapsed "$t0") so far; log: $log)"; done ) &
  ticker=$!
  "$@" >>"$log" 2>&1 || rc=$?
  kill "$ticker" 2>/dev/null; wait "$ticker" 2>/dev/null || true
  if [ "$rc" != 0 ]; then
    say "error: '$*' failed; last lines of $log:"
    tail -n 25 "$log" | sed 's/^/    /' >&2
    return 1
  fi
}

# install_tool <candidate> <final path> <prove function>: prove the freshly built binary, then move
# it into the cache atomically. A binary that does not run never reaches the cache.
install_tool() {
  local cand="$1" out="$2" provefn="$3" why
  if ! why="$("$provefn" "$cand")"; then
    say "error: the freshly built tool does not work: $why"; return 1
  fi
  mkdir -p "$(dirname "$out")"
  # rm -rf: a broken earlier attempt may have left a directory at the tool's path.
  rm -rf "$out"
  cp "$cand" "$out.tmp.$$" && chmod 0755 "$out.tmp.$$" && mv "$out.tmp.$$" "$out"
}

build_temporal() {
  local out why t0=$SECONDS; out="$(temporal_bin)"
  why="$(prove_temporal "$out")" && return 0
  if [ -e "$out" ] || [ -L "$out" ]; then say "the cached Temporal CLI is unusable ($why); rebuilding"; fi
  local sys; sys="$(command -v temporal 2>/dev/null || true)"
  if [ -n "$sys" ] && prove_temporal "$sys" >/dev/null; then
    say "using the Temporal CLI $TEMPORAL_VERSION found on PATH ($sys)"
    mkdir -p "$(dirname "$out")"; rm -rf "$out"; ln -s "$sys" "$out"; return 0
  fi
  local log="$LOGDIR/build-temporal.log" work; work="$(mktemp -d)"
  : >"$log"
  say "building the Temporal dev server (Temporal CLI $TEMPORAL_VERSION; first time only, ${ESTIMATE_TEMPORAL:-$TEMPORAL_ESTIMATE}); log: $log"
  # GOBIN is an empty directory of our own: the binary cannot land inside a source directory.
  STAGE="building the Temporal dev server" run_logged "$log" env GOBIN="$work/bin" go install -trimpath \
    -ldflags "$LDFLAGS_COMMON -X github.com/temporalio/cli/temporalcli.Version=$TEMPORAL_VERSION" \
    "github.com/temporalio/cli/cmd/temporal@v$TEMPORAL_VERSION" || { rm -rf "$work"; return 1; }
  install_tool "$work/bin/temporal" "$out" prove_temporal || { rm -rf "$work"; return 1; }
  rm -rf "$work"
  say "Temporal CLI $TEMPORAL_VERSION built in $(elapsed "$t0"): $out"
}

build_bao() {
  local why
  prove_bao "$(openbao_bin)" >/dev/null && return 0
  why="$(prove_vault "$(vault_bin)")" && return 0
  if [ -e "$(vault_bin)" ] || [ -L "$(vault_bin)" ]; then say "the cached secrets store is unusable ($why); rebuilding"; fi
  local sys; sys="$(command -v bao 2>/dev/null || true)"
  if [ -n "$sys" ] && prove_bao "$sys" >/dev/null; then
    say "using OpenBao $BAO_VERSION found on PATH ($sys)"
    mkdir -p "$(dirname "$(openbao_bin)")"; rm -rf "$(openbao_bin)"; ln -s "$sys" "$(openbao_bin)"; return 0
  fi
  local log="$LOGDIR/build-secretstore.log" dir t0=$SECONDS
  : >"$log"
  dir="$(go mod download -json "github.com/openbao/openbao@$BAO_COMMIT" 2>>"$log" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p' || true)"
  if [ -z "$dir" ]; then
    say "the Go module proxy does not serve OpenBao; building Vault $VAULT_VERSION (same API) instead"
    build_vault "$log"; return
  fi
  local work src; work="$(mktemp -d)"; src="$work/src"
  say "building the secrets store (OpenBao $BAO_VERSION; first time only, ${ESTIMATE_VAULT:-$VAULT_ESTIMATE}); log: $log"
  cp -r "$dir" "$src"; chmod -R u+w "$src"
  (
    cd "$src"
    for m in api/v2 api/auth/approle/v2 api/auth/kubernetes/v2 api/auth/userpass/v2 sdk/v2; do
      go mod edit -dropreplace "github.com/openbao/openbao/$m"
    done
    go mod edit -dropreplace github.com/boltdb/bolt
    for m in api/v2 api/auth/approle/v2 api/auth/userpass/v2 api/auth/kubernetes/v2; do
      go mod edit -require "github.com/openbao/openbao/$m@v2.6.0"
    done
    run_logged "$log" go get "github.com/openbao/openbao/sdk/v2@${BAO_COMMIT:0:12}"
    run_logged "$log" go mod tidy
    # Output outside the source tree: the module has a package directory named like the binary.
    run_logged "$log" go build -trimpath -ldflags "$LDFLAGS_COMMON" -o "$work/bin/bao" .
  ) || { rm -rf "$work"; return 1; }
  install_tool "$work/bin/bao" "$(openbao_bin)" prove_bao || { rm -rf "$work"; return 1; }
  rm -rf "$work"
  say "OpenBao $BAO_VERSION built in $(elapsed "$t0"): $(openbao_bin)"
}

# Import aliases of Vault plugins the local stack never uses (see build_vault).
VAULT_DROP="credAliCloud|credAzure|credCentrify|credCF|credGcp|credJWT|credOIDC|credKerb|credKube|credOCI|credAws|credGitHub|credLdap|credOkta|credRadius"
VAULT_DROP+="|dbCouchbase|dbElastic|dbMongoAtlas|dbRedis|dbRedisElastiCache|dbSnowflake|dbCass|dbHana|dbInflux|dbMongo|dbMssql|dbMysql|dbPostgres|dbRedshift"
VAULT_DROP+="|logicalAd|logicalAlicloud|logicalAzure|logicalGcp|logicalGcpKms|logicalKube|logicalMongoAtlas|logicalLDAP|logicalTerraform|logicalAws|logicalConsul|logicalNomad|logicalRabbit|logicalDb"
VAULT_DROP+="|physAerospike|physAliCloudOSS|physAzure|physCassandra|physCockroachDB|physConsul|physCouchDB|physDynamoDB|physEtcd|physFoundationDB|physGCS|physManta|physMSSQL|physMySQL|physOCI|physPostgreSQL|physS3|physSpanner|physSwift|physZooKeeper|csr|ksr"

# trim_go_file FILE 'alias|alias|...': removes the import lines of those aliases and the map entries
# that use them (one-line entries, and `"name": {` ... `},` blocks whose Factory is one of them).
# Fails when the file does not look as expected, rather than building something else.
trim_go_file() {
  local file="$1" drop="$2" before after
  [ -f "$file" ] || { echo "trim: $file is missing" >&2; return 1; }
  before="$(wc -l <"$file")"
  awk -v drop="$drop" '
    BEGIN { imp = "^[ \t]+(" drop ")[ \t]+\""; use = "(^|[^A-Za-z0-9_])(" drop ")\." }
    $0 ~ imp { next }
    inblock { buf = buf "\n" $0; if ($0 ~ use) dropit = 1
              if ($0 ~ /^[ \t]+},[ \t]*$/) { inblock = 0; if (!dropit) print buf }
              next }
    /^[ \t]+"[^"]+":[ \t]+(&[A-Za-z0-9_.]+)?\{[ \t]*$/ { inblock = 1; dropit = 0; buf = $0; next }
    $0 ~ use { next }
    { print }
  ' "$file" >"$file.trim" && mv "$file.trim" "$file"
  after="$(wc -l <"$file")"
  [ "$after" -lt "$before" ] || { echo "trim: nothing matched in $file" >&2; return 1; }
}

build_vault() {
  local log="$1" out dir work src t0=$SECONDS; out="$(vault_bin)"
  say "building the secrets store (Vault $VAULT_VERSION; first time only, ${ESTIMATE_VAULT:-$VAULT_ESTIMATE}); log: $log"
  dir="$(go mod download -json "github.com/hashicorp/vault@v$VAULT_VERSION" 2>>"$log" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p' || true)"
  if [ -z "$dir" ]; then
    say "error: go mod download of github.com/hashicorp/vault@v$VAULT_VERSION failed; last lines of $log:"
    tail -n 25 "$log" | sed 's/^/    /' >&2
    return 1
  fi
  work="$(mktemp -d)"; src="$work/src"
  cp -r "$dir" "$src"; chmod -R u+w "$src"
  (
    cd "$src"
    # The module zip has no api/ or sdk/ subtrees, so the local replaces must go; the
    # published versions that go.mod already requires are used instead.
    for m in api api/auth/approle api/auth/kubernetes api/auth/userpass sdk; do
      go mod edit -dropreplace "github.com/hashicorp/vault/$m"
    done
    go mod edit -require "github.com/hashicorp/vault/sdk@$VAULT_SDK"
    # The stack uses the KV, PKI, AppRole and token engines of a dev-mode (in-memory) server. The
    # builtin registry and the CLI's tables also link every cloud and database plugin with its SDK
    # (Alibaba, Azure, GCP, OCI, Kubernetes, MongoDB, Snowflake, ...): most of the build's time.
    # Their entries and imports are dropped from those two files; every engine the keeper talks to
    # is untouched.
    trim_go_file helper/builtinplugins/registry.go "$VAULT_DROP"
    trim_go_file command/commands.go "$VAULT_DROP"
    # Output outside the source tree: the module root has a package directory named vault/, and
    # `go build -o vault .` would write the binary into it.
    STAGE="building the secrets store" run_logged "$log" go build -trimpath -ldflags "$LDFLAGS_COMMON" -o "$work/bin/vault" .
  ) || { rm -rf "$work"; return 1; }
  install_tool "$work/bin/vault" "$out" prove_vault || { rm -rf "$work"; return 1; }
  rm -rf "$work"
  say "Vault $VAULT_VERSION built in $(elapsed "$t0"): $out"
}

bao_path() {
  if prove_bao "$(openbao_bin)" >/dev/null; then openbao_bin; else vault_bin; fi
}

# Both builds at once: each spends part of its time waiting on module downloads and on the
# single-threaded link, which the other fills (measured in docs/stack.md).
build_all() {
  if check_tool temporal >/dev/null && check_tool bao >/dev/null; then return 0; fi
  mkdir -p "$LOGDIR"
  local p1 p2 rc=0
  if [ "${KEEPER_TOOLS_SEQUENTIAL:-0}" = 1 ]; then
    # Only for measuring the difference (docs/stack.md); the default is the faster parallel build.
    build_temporal || rc=1
    build_bao || rc=1
  else
    ESTIMATE_TEMPORAL="$TEMPORAL_ESTIMATE_BESIDE" ESTIMATE_VAULT="$VAULT_ESTIMATE_BESIDE"
    build_temporal & p1=$!
    build_bao & p2=$!
    wait "$p1" || rc=1
    wait "$p2" || rc=1
  fi
  if [ "$rc" != 0 ]; then
    say "error: building the stack's tools failed after $(elapsed); logs: $LOGDIR/build-*.log; retry: make stack"
    return 1
  fi
  say "tools ready after $(elapsed) in $TOOLS"
}

case "${1:-all}" in
  check)
    [ -n "${2:-}" ] || { echo "usage: build-tools.sh check temporal|bao" >&2; exit 2; }
    check_tool "$2" ;;
  key) key ;;
  path-temporal) temporal_bin ;;
  path-bao) bao_path ;;
  temporal) need_go; mkdir -p "$LOGDIR"; build_temporal ;;
  bao) need_go; mkdir -p "$LOGDIR"; build_bao ;;
  all) need_go; build_all ;;
  *) echo "usage: build-tools.sh [all|temporal|bao|path-temporal|path-bao|check TOOL|key]" >&2; exit 2 ;;
esac
