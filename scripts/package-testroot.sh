#!/usr/bin/env bash
# A clean Debian 12 root for the package tests, made once with mmdebstrap and kept as a tarball
# outside the repository, keyed by its recipe and its apt sources (change either, get a new tarball):
#
#   scripts/package-testroot.sh            print the tarball's path (building it first if missing)
#
# The tests unpack it into a fresh directory per run and enter it with unshare + chroot, so the
# machine itself never gets the packages. minbase plus adduser and git, the packages' dependencies
# that minbase lacks, so installing needs no network; nothing else: the rest must come from the packages.
#
# Where the packages come from: this machine's own apt sources for the suite (the files under
# /etc/apt that name bookworm, one-line or deb822; mmdebstrap pastes each MIRROR argument that is a
# file into the root's sources), so the root is built from whatever mirror or proxy the machine
# already uses and the project names none. KEEPER_DEBIAN_SOURCES overrides them: a sources file, a
# mirror URI, or several separated by spaces.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
"$ROOT/scripts/package-tools.sh"

SUITE=bookworm
CACHE="${KEEPER_TOOLS_CACHE:-$HOME/.cache/keeper-tools}/debian-roots"
APT_DIR=/etc/apt

sources=()
if [ -n "${KEEPER_DEBIAN_SOURCES:-}" ]; then
  read -r -a sources <<<"$KEEPER_DEBIAN_SOURCES"
else
  # Only files whose suites name this one as a word (bookworm, bookworm-updates, bookworm-security);
  # a third-party list such as `cloud-sdk-bookworm` is not Debian's and is left out.
  for f in "$APT_DIR/sources.list" "$APT_DIR"/sources.list.d/*.list "$APT_DIR"/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    grep -v '^[[:space:]]*#' "$f" | grep -Eq "(^|[[:space:]])$SUITE(-[a-z]+)?([[:space:]]|\$)" && sources+=("$f")
  done
  if [ ${#sources[@]} -eq 0 ]; then
    echo "package-testroot: error: no apt source for $SUITE under $APT_DIR (sources.list, sources.list.d/*.list, *.sources);" >&2
    echo "package-testroot: set KEEPER_DEBIAN_SOURCES to an apt sources file or a mirror URI for $SUITE" >&2
    exit 1
  fi
fi

# The key covers what the sources say, not only their names: another mirror is another root.
recipe="mmdebstrap --variant=minbase --include=adduser,git --format=tar $SUITE"
key="$( { printf '%s\n' "$recipe"; for s in "${sources[@]}"; do if [ -f "$s" ]; then cat "$s"; else printf '%s\n' "$s"; fi; done; } | sha256sum | cut -c1-16)"
tarball="$CACHE/$SUITE-minbase-$key.tar"
if [ ! -s "$tarball" ]; then
  mkdir -p "$CACHE"
  log="$CACHE/$SUITE-minbase-$key.log"
  echo "package-testroot: building a clean Debian 12 root with mmdebstrap from ${sources[*]} (first time only, about 2 minutes); log: $log" >&2
  if ! mmdebstrap --variant=minbase --include=adduser,git --format=tar "$SUITE" "$tarball.tmp" "${sources[@]}" >"$log" 2>&1; then
    tail -n 15 "$log" >&2
    rm -f "$tarball.tmp"
    echo "package-testroot: error: mmdebstrap failed; see $log" >&2
    exit 1
  fi
  mv "$tarball.tmp" "$tarball"
fi
echo "$tarball"
