#!/usr/bin/env bash
# A clean Debian 12 root that boots systemd, for the state-module tests (test/modules/): the package
# tests' minbase root (scripts/package-testroot.sh) plus systemd, dbus, nginx-light as a small real
# service, logrotate (which a Debian host has and minbase lacks; examples/nginx-site installs and
# checks its snippet with it), and less/ed as two small packages the package-module tests purge and
# install again. Made once with mmdebstrap from this machine's own apt sources and kept as a tarball
# outside the repository, keyed by its recipe and those sources (change either, get a new tarball).
# The package lists and the downloaded .debs are kept in it, so installing those packages again
# needs no network.
#
#   scripts/systemd-testroot.sh            print the tarball's path (building it first if missing)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
"$ROOT/scripts/package-tools.sh"

CACHE="${KEEPER_TOOLS_CACHE:-$HOME/.cache/keeper-tools}/debian-roots"
# The machine's apt sources (deb822 and one-line files), pasted into the root's sources.list.
sources="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null; grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list || true)"
if [ -z "$sources" ]; then echo "systemd-testroot: error: this machine has no apt sources to build from" >&2; exit 1; fi
include="adduser,git,systemd,systemd-sysv,dbus,nginx-light,logrotate,less,ed,procps"
recipe="mmdebstrap --variant=minbase --include=$include --skip=cleanup/apt --format=tar bookworm"
key="$(printf '%s\n%s' "$recipe" "$sources" | sha256sum | cut -c1-16)"
tarball="$CACHE/bookworm-systemd-$key.tar"
if [ ! -s "$tarball" ]; then
  mkdir -p "$CACHE"
  log="$CACHE/bookworm-systemd-$key.log"
  list="$CACHE/bookworm-systemd-$key.sources"
  printf '%s\n' "$sources" >"$list"
  echo "systemd-testroot: building a Debian 12 root with systemd and nginx-light with mmdebstrap (first time only, a few minutes); log: $log" >&2
  if ! mmdebstrap --variant=minbase --include="$include" --skip=cleanup/apt --format=tar bookworm "$tarball.tmp" "$list" >"$log" 2>&1; then
    tail -n 15 "$log" >&2
    rm -f "$tarball.tmp"
    echo "systemd-testroot: error: mmdebstrap failed; see $log" >&2
    exit 1
  fi
  mv "$tarball.tmp" "$tarball"
fi
echo "$tarball"
