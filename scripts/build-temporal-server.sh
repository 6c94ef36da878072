#!/usr/bin/env bash
# Builds the Temporal *server* (not the dev server) and its SQL schema tool from their Go module,
# for the production rehearsal (scripts/prod-rehearsal.sh, docs/production.md). On demand only:
# `make prepare` and `make test` never call it, the first build takes about 3 minutes on 2 cores.
#
#   scripts/build-temporal-server.sh [build]   build what is missing or unusable
#   scripts/build-temporal-server.sh check     exit 0 if the cached binaries work, else print why
#   scripts/build-temporal-server.sh path      print the cache directory (holds temporal-server, temporal-sql-tool)
#
# A recipe of its own, in its own file: the recipe key of scripts/build-tools.sh hashes that whole
# script, so adding this recipe there would throw away everybody's cached CLI and secrets store.
# Cache: $KEEPER_TOOLS (default ~/.cache/keeper-tools)/temporal-server-<version>-<key>/, where the
# key hashes this script and the Go version, as build-tools.sh does.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TOOLS="${KEEPER_TOOLS:-$HOME/.cache/keeper-tools}"
LOGDIR="${KEEPER_TOOLS_LOG_DIR:-${KEEPER_STACK_DIR:-$ROOT/.stack}/logs}"
# The server version the Temporal CLI 1.5.1 embeds (its module is already in the Go module cache
# after the CLI build, so the first build mostly compiles).
SERVER_VERSION=1.29.1
export GOFLAGS="${GOFLAGS:-} -mod=mod"
export CGO_ENABLED=0

say() { echo "build-temporal-server: $*" >&2; }
command -v go >/dev/null 2>&1 || { [ -x /usr/local/go/bin/go ] && export PATH="/usr/local/go/bin:$PATH"; } || true

key() {
  local gover=""
  command -v go >/dev/null 2>&1 && gover="$(go env GOVERSION 2>/dev/null || true)"
  { cat "$ROOT/scripts/build-temporal-server.sh"; echo "$gover"; } | sha256sum | cut -c1-12
}
dir() { echo "$TOOLS/temporal-server-$SERVER_VERSION-$(key)"; }

# Prints nothing when both binaries run and report the version; otherwise why.
check() {
  local d out; d="$(dir)"
  for b in temporal-server temporal-sql-tool; do
    [ -x "$d/$b" ] || { echo "$d/$b is missing or not executable"; return 1; }
  done
  out="$(timeout 20 "$d/temporal-server" --version 2>&1)" || { echo "temporal-server does not run: ${out:0:200}"; return 1; }
  grep -qF "$SERVER_VERSION" <<<"$out" || { echo "temporal-server reports '$out', not $SERVER_VERSION"; return 1; }
  timeout 20 "$d/temporal-sql-tool" --help >/dev/null 2>&1 || { echo "temporal-sql-tool does not run"; return 1; }
}

build() {
  local why; why="$(check)" && return 0
  command -v go >/dev/null 2>&1 || { say "error: Go is not installed; install Go 1.22+, then retry"; exit 2; }
  mkdir -p "$LOGDIR"
  local log="$LOGDIR/build-temporal-server.log" work t0=$SECONDS d; d="$(dir)"
  work="$(mktemp -d)"
  : >"$log"
  say "building the Temporal server $SERVER_VERSION and its SQL tool (first time only, about 3 minutes on 2 cores); log: $log"
  if ! env GOBIN="$work/bin" go install -trimpath -ldflags "-s -w" \
    "go.temporal.io/server/cmd/server@v$SERVER_VERSION" \
    "go.temporal.io/server/cmd/tools/sql@v$SERVER_VERSION" >>"$log" 2>&1; then
    say "error: go install failed; last lines of $log:"; tail -n 25 "$log" | sed 's/^/    /' >&2
    rm -rf "$work"; return 1
  fi
  rm -rf "$d.tmp.$$"; mkdir -p "$d.tmp.$$"
  cp "$work/bin/server" "$d.tmp.$$/temporal-server"
  cp "$work/bin/sql" "$d.tmp.$$/temporal-sql-tool"
  chmod 0755 "$d.tmp.$$"/*
  rm -rf "$work" "$d"; mv "$d.tmp.$$" "$d"
  why="$(check)" || { say "error: the freshly built server does not work: $why"; rm -rf "$d"; return 1; }
  say "Temporal server $SERVER_VERSION built in $((SECONDS - t0))s: $d"
}

case "${1:-build}" in
  build) build ;;
  check) check ;;
  path) dir ;;
  key) key ;;
  *) echo "usage: build-temporal-server.sh [build|check|path|key]" >&2; exit 2 ;;
esac
