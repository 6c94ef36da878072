#!/usr/bin/env bash
# The Debian tools `make package` and the package tests need, installed when missing (Debian 12):
# dpkg-deb (dpkg; no fakeroot: dpkg-deb --root-owner-group), dpkg-shlibdeps (dpkg-dev) and strip
# (binutils) for the bundled runtime, lintian to check the
# packages, mmdebstrap to build the clean Debian 12 root the tests install into, systemd for
# `systemd-analyze verify`/`security` on the unit files (works offline, no running systemd needed).
#
#   scripts/package-tools.sh          install what is missing (as root or with sudo)
set -euo pipefail

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
command -v dpkg-deb >/dev/null 2>&1 || missing+=(dpkg)
command -v lintian >/dev/null 2>&1 || missing+=(lintian)
command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)
command -v unshare >/dev/null 2>&1 || missing+=(util-linux)
command -v xz >/dev/null 2>&1 || missing+=(xz-utils)
command -v strip >/dev/null 2>&1 || missing+=(binutils)
command -v dpkg-shlibdeps >/dev/null 2>&1 || missing+=(dpkg-dev)
if [ ${#missing[@]} -gt 0 ]; then
  log="${TMPDIR:-/tmp}/keeper-package-tools-apt.log"
  echo "package-tools: installing Debian packages (first time only): ${missing[*]}; log: $log" >&2
  # Another apt run (the stack's) may hold the dpkg lock: wait for it rather than fail.
  as_root apt-get -o DPkg::Lock::Timeout=600 update -qq >"$log" 2>&1 \
    || { tail -n 15 "$log" >&2; echo "package-tools: error: apt-get update failed; see $log" >&2; exit 1; }
  DEBIAN_FRONTEND=noninteractive as_root apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
    "${missing[@]}" >>"$log" 2>&1 \
    || { tail -n 15 "$log" >&2; echo "package-tools: error: apt-get install ${missing[*]} failed; see $log" >&2; exit 1; }
fi
