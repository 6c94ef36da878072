#!/usr/bin/env bash
# A clean Debian 12 root for the package tests, made once with mmdebstrap and kept as a tarball
# outside the repository, keyed by its recipe (change the recipe, get a new tarball):
#
#   scripts/package-testroot.sh            print the tarball's path (building it first if missing)
#
# The tests unpack it into a fresh directory per run and enter it with unshare + chroot, so the
# machine itself never gets the packages. minbase plus adduser and git, the packages' dependencies
# that minbase lacks, so installing needs no network; nothing else: the rest must come from the packages.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
"$ROOT/scripts/package-tools.sh"

CACHE="${KEEPER_TOOLS_CACHE:-$HOME/.cache/keeper-tools}/debian-roots"
MIRROR="${KEEPER_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
recipe="mmdebstrap --variant=minbase --include=adduser,git --format=tar bookworm $MIRROR"
key="$(printf '%s' "$recipe" | sha256sum | cut -c1-16)"
tarball="$CACHE/bookworm-minbase-$key.tar"
if [ ! -s "$tarball" ]; then
  mkdir -p "$CACHE"
  log="$CACHE/bookworm-minbase-$key.log"
  echo "package-testroot: building a clean Debian 12 root with mmdebstrap (first time only, about 2 minutes); log: $log" >&2
  # shellcheck disable=SC2086
  if ! mmdebstrap --variant=minbase --include=adduser,git --format=tar bookworm "$tarball.tmp" "$MIRROR" >"$log" 2>&1; then
    tail -n 15 "$log" >&2
    rm -f "$tarball.tmp"
    echo "package-testroot: error: mmdebstrap failed; see $log" >&2
    exit 1
  fi
  mv "$tarball.tmp" "$tarball"
fi
echo "$tarball"
