#!/usr/bin/env bash
# The first-time path in one command, as a new user on a new machine takes it: a fresh clone of this
# checkout's HEAD, a fresh .stack, an empty tool cache, empty Go and npm caches; then `make demo`
# (cold), `make demo` again (warm) and `make test`, printing the wall time of each.
#
#   scripts/fresh-rehearsal.sh [--tools DIR] [--warm-go] [--keep]
#
#   --tools DIR  the tool cache to use; it must be empty or absent (default: a temporary directory,
#                removed afterwards). Pointing it at ~/.cache/keeper-tools while that does not exist
#                rehearses a new machine and leaves the built tools for later runs.
#   --warm-go    keep the machine's Go module and build caches (faster; no longer a first time)
#   --keep       keep the clone (its path is printed)
#
# What it changes on this machine: it stops the stack of this checkout (make stack-down), drops the
# `keeper` database (the demo's; a fresh machine has none) before and after, and leaves the
# rehearsal's stack stopped; this checkout's next `make demo` starts its own demo from scratch.
# Debian packages already installed stay installed (they cannot be un-had); everything else is new.
# It rehearses what is committed: uncommitted changes are not in the clone.
set -euo pipefail
# The whole script is one function, parsed before it runs: editing this file during a rehearsal
# (which takes a quarter of an hour) cannot change what the running one does.
main() {

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TOOLS="" WARM_GO=0 KEEP=0
while [ $# -gt 0 ]; do
  case "$1" in
    --tools) TOOLS="$2"; shift 2 ;;
    --warm-go) WARM_GO=1; shift ;;
    --keep) KEEP=1; shift ;;
    *) echo "usage: scripts/fresh-rehearsal.sh [--tools DIR] [--warm-go] [--keep]" >&2; exit 2 ;;
  esac
done

say() { echo "rehearsal: $*" >&2; }
fmt() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

WORK="$(mktemp -d /tmp/keeper-rehearsal-XXXXXX)"
TEMP_TOOLS=0
if [ -z "$TOOLS" ]; then TOOLS="$WORK/tools"; TEMP_TOOLS=1; fi
if [ -d "$TOOLS" ] && [ -n "$(ls -A "$TOOLS")" ]; then
  say "error: the tool cache $TOOLS is not empty; a rehearsal needs an empty one (omit --tools for a temporary one)"
  exit 2
fi

CLONE="$WORK/keeper"
export KEEPER_TOOLS="$TOOLS"
unset KEEPER_STACK_DIR
if [ "$WARM_GO" = 0 ]; then
  export GOMODCACHE="$WORK/gomodcache" GOCACHE="$WORK/gocache" npm_config_cache="$WORK/npm-cache"
fi

cleanup() {
  local rc=$?
  if [ -d "$CLONE" ]; then (cd "$CLONE" && scripts/stack.sh down >/dev/null 2>&1) || true; fi
  # The rehearsal's demo database (its operator's credential goes with the clone): dropped, so this
  # checkout's next `make demo` creates its own first operator.
  if command -v pg_ctlcluster >/dev/null 2>&1; then
    pg_ctlcluster 15 main start >/dev/null 2>&1 || true
    for _ in $(seq 1 50); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.2; done
    (cd / && runuser -u postgres -- dropdb --if-exists keeper) >/dev/null 2>&1 || true
  fi
  # The Go module cache is read-only by design.
  [ -d "$WORK/gomodcache" ] && chmod -R u+w "$WORK/gomodcache" 2>/dev/null
  if [ "$KEEP" = 1 ]; then
    say "kept the clone: $CLONE"
    rm -rf "$WORK/gomodcache" "$WORK/gocache" "$WORK/npm-cache"
    [ "$TEMP_TOOLS" = 1 ] && rm -rf "$TOOLS"
  else
    rm -rf "$WORK"
  fi
  exit $rc
}
trap cleanup EXIT

say "stopping this checkout's stack and dropping the demo database, as on a machine that never ran it"
(cd "$ROOT" && scripts/stack.sh down >/dev/null 2>&1) || true
if command -v pg_ctlcluster >/dev/null 2>&1; then
  pg_ctlcluster 15 main start >/dev/null 2>&1 || true
  for _ in $(seq 1 50); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.2; done
  (cd / && runuser -u postgres -- dropdb --if-exists keeper) >/dev/null 2>&1 || true
fi

git clone --quiet "$ROOT" "$CLONE"
say "clone of $(git -C "$CLONE" rev-parse --short HEAD) in $CLONE; tools $TOOLS; Go caches $([ "$WARM_GO" = 1 ] && echo "warm (this machine's)" || echo empty)"
cd "$CLONE"

t0=$SECONDS
make demo
COLD=$((SECONDS - t0))
say "cold make demo: $(fmt $COLD)"

t0=$SECONDS
make demo >/dev/null
WARM=$((SECONDS - t0))
say "warm make demo: $(fmt $WARM)"

# make test starts the stack itself, as CI does on a stopped machine.
make stack-down >/dev/null 2>&1 || true
t0=$SECONDS
set +e
make test 2>&1 | tee "$WORK/test.log"
TEST_RC=${PIPESTATUS[0]}
set -e
TEST=$((SECONDS - t0))
SUMMARY="$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$WORK/test.log" | tail -1 || true)"

echo
echo "rehearsal of $(git rev-parse --short HEAD) on $(nproc) cores, $(date -u +%Y-%m-%d):"
echo "  cold make demo  $(fmt $COLD)   (target 12m00s)"
echo "  warm make demo  $(fmt $WARM)   (target 0m30s)"
echo "  make test       $(fmt $TEST)   ${SUMMARY:-no summary line} (exit $TEST_RC)"
[ "$TEST_RC" = 0 ] || { say "make test failed; its output is above"; exit 1; }
}
main "$@"
