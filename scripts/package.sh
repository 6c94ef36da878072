#!/usr/bin/env bash
# `make package`: the Debian packages keeper, soul and soul-lint, from the built dist/ and the
# installed node_modules (checked against package-lock.json), offline and reproducibly: the same
# commit and node binary give byte-identical .deb files (fixed mtimes from SOURCE_DATE_EPOCH, sorted
# archives, root-owned members, no build paths or times in the contents). docs/install.md explains
# the layout and the choices.
#
#   scripts/package.sh [--version V] [--out DIR] [--fast] [PACKAGE...]
#     --version  the package version (default: package.json's); `soul --version` reports it
#     --out      where the .deb files go (default: build/packages)
#     --fast     gzip -1 instead of xz: the same contents in a bigger archive built in seconds rather
#                than minutes (the package tests build with it; releases without)
#     PACKAGE    keeper, soul, soul-lint (default: all three)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

die() { echo "package: error: $*" >&2; exit 1; }

version="" out="$ROOT/build/packages" pkgs=() compress=(-Zxz)
while [ $# -gt 0 ]; do
  case "$1" in
    --version) version="$2"; shift 2 ;;
    --version=*) version="${1#*=}"; shift ;;
    --out) out="$2"; shift 2 ;;
    --out=*) out="${1#*=}"; shift ;;
    --fast) compress=(-Zgzip -z1); shift ;;
    keeper|soul|soul-lint) pkgs+=("$1"); shift ;;
    *) die "unknown argument $1 (usage: scripts/package.sh [--version V] [--out DIR] [--fast] [keeper|soul|soul-lint...])" ;;
  esac
done
[ ${#pkgs[@]} -gt 0 ] || pkgs=(keeper soul soul-lint)
[ -n "$version" ] || version="$(node -p 'require("./package.json").version')"
[[ "$version" =~ ^[0-9][0-9A-Za-z.+~-]*$ ]] || die "version \"$version\" is not a Debian version (digits first, then [0-9A-Za-z.+~-])"

"$ROOT/scripts/package-tools.sh"
[ -f dist/keeper/cli.js ] && [ -f dist/ui-app/index.html ] || die "dist/ is not built; run make build first"

# The runtime every package carries (docs/install.md: Debian 12's nodejs is 18, the project needs 20.19+).
node_bin="$(readlink -f "$(command -v node)")"
node_version="$("$node_bin" --version)"
node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)' \
  || die "node $node_version is older than 20.19; install Node 20.19+ (the packages carry this node)"
node_license=""
for f in /usr/share/doc/nodejs/LICENSE /usr/share/doc/nodejs/copyright "$(dirname "$node_bin")/../share/doc/node/LICENSE"; do
  [ -f "$f" ] && { node_license="$f"; break; }
done

# One date for every file and archive member: the commit's, so a rebuild of the same commit matches.
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}"
export TZ=UTC LC_ALL=C.UTF-8

mkdir -p "$out"
work="$(mktemp -d "${TMPDIR:-/tmp}/keeper-package.XXXXXX")"
trap 'rm -rf "$work"' EXIT

describe() {
  case "$1" in
    keeper) echo "control server of Keeper: operator API, soul streams, workers
 Keeper is a cluster configuration and orchestration service. This package
 holds the control server (keeper), the operator CLI (keeperctl), its systemd
 unit and /etc/keeper, with its own Node.js runtime under /usr/lib/keeper." ;;
    soul) echo "Keeper soul: the agent on each managed host
 The soul onboards once with a bootstrap token, then holds one outbound mTLS
 gRPC stream to the keeper and applies the steps it is sent (packages, files).
 This package holds the soul, its systemd unit and /etc/soul, with its own
 Node.js runtime under /usr/lib/soul." ;;
    soul-lint) echo "Keeper soul-lint: offline checker of service repositories
 soul-lint checks a Keeper service repository (service.yml, scenarios and
 templates) without a server or network, for editors and CI, with text, JSON
 or SARIF reports. It carries its own Node.js runtime under /usr/lib/soul-lint." ;;
  esac
}

build_one() {
  local pkg="$1" stage="$work/$1"
  local lib="$stage/usr/lib/$pkg"
  mkdir -p "$stage/DEBIAN" "$lib/node/bin" "$lib/bin" "$stage/usr/bin" "$stage/usr/share/doc/$pkg"
  node packaging/stage.js "$pkg" "$stage" "$version" >/dev/null

  # The runtime and the native modules, without their debug symbols (the code is the same; the
  # runtime is 12 MB smaller), as dh_strip does for any Debian package.
  strip --strip-unneeded -o "$lib/node/bin/node" "$node_bin"
  chmod 0755 "$lib/node/bin/node"
  find "$lib/app" -name '*.node' -type f -print0 | sort -z | xargs -0 -r strip --strip-unneeded
  [ -z "$node_license" ] || install -m 0644 "$node_license" "$lib/node/LICENSE"

  # Launchers: the package's own node, never one on PATH.
  local cmds=("$pkg")
  [ "$pkg" = keeper ] && cmds+=(keeperctl)
  # The soul lives on every host, mostly idle and waiting on I/O: packaging/soul/node-flags (V8's
  # lite mode: no optimizing compiler, feedback allocated lazily; a small young generation) keeps
  # its resident memory about 15 MB lower at no cost its work shows (docs/performance.md).
  local node_flags=''
  if [ "$pkg" = soul ]; then node_flags="$(cat packaging/soul/node-flags) "; fi
  for cmd in "${cmds[@]}"; do
    printf '#!/bin/sh\n# %s from the %s package: its own Node.js runtime (docs/install.md).\nexec /usr/lib/%s/node/bin/node %s/usr/lib/%s/app/bin/%s.js "$@"\n' \
      "$cmd" "$pkg" "$pkg" "$node_flags" "$pkg" "$cmd" > "$stage/usr/bin/$cmd"
    chmod 0755 "$stage/usr/bin/$cmd"
  done

  # Config (conffiles), unit, maintainer scripts.
  local conffiles=()
  if [ -f "packaging/$pkg/$pkg.yml" ]; then
    install -D -m 0644 "packaging/$pkg/$pkg.yml" "$stage/etc/$pkg/$pkg.yml"
    conffiles+=("/etc/$pkg/$pkg.yml")
  fi
  [ -f "packaging/$pkg/$pkg.service" ] && install -D -m 0644 "packaging/$pkg/$pkg.service" "$stage/lib/systemd/system/$pkg.service"
  [ -f "packaging/$pkg/wait-ready.js" ] && install -m 0644 "packaging/$pkg/wait-ready.js" "$lib/bin/wait-ready.js"
  for s in postinst prerm postrm; do
    [ -f "packaging/$pkg/$s" ] && install -m 0755 "packaging/$pkg/$s" "$stage/DEBIAN/$s"
  done
  if [ ${#conffiles[@]} -gt 0 ]; then printf '%s\n' "${conffiles[@]}" > "$stage/DEBIAN/conffiles"; fi

  # Lintian's verdicts this package answers on purpose (each one explained in the file and in docs/install.md).
  if [ -f "packaging/$pkg/lintian-overrides" ]; then
    install -D -m 0644 "packaging/$pkg/lintian-overrides" "$stage/usr/share/lintian/overrides/$pkg"
  fi

  # Docs: copyright (Apache-2.0 by reference, as Debian does) and a changelog.
  install -m 0644 packaging/copyright "$stage/usr/share/doc/$pkg/copyright"
  printf '%s (%s) stable; urgency=medium\n\n  * Built from keeper commit %s.\n\n -- Keeper developers <keeper@example.org>  %s\n' \
    "$pkg" "$version" "$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)" \
    "$(date -u -d "@$SOURCE_DATE_EPOCH" -R)" | gzip -9n > "$stage/usr/share/doc/$pkg/changelog.gz"
  chmod 0644 "$stage/usr/share/doc/$pkg/changelog.gz"

  # Depends: the shared libraries of the ELF files, as dpkg-shlibdeps finds them; adduser for the accounts.
  local elfs shlibs deps
  mapfile -t elfs < <(find "$stage/usr/lib" -type f \( -name '*.node' -o -path '*/node/bin/node' \) | sort)
  mkdir -p "$work/shlibs-$pkg/debian" && touch "$work/shlibs-$pkg/debian/control"
  shlibs="$(cd "$work/shlibs-$pkg" && dpkg-shlibdeps -O --ignore-missing-info "${elfs[@]/#/-e}" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')"
  [ -n "$shlibs" ] || die "dpkg-shlibdeps found no library dependencies for $pkg"
  deps="$shlibs"
  case "$pkg" in
    keeper) deps="adduser, git, $deps" ;;
    soul) deps="adduser, $deps" ;;
  esac

  # Every file and folder: fixed modes and the one date, so the archive depends on content only.
  find "$stage" -type d -exec chmod 0755 {} +
  find "$stage" -path "$stage/DEBIAN" -prune -o -type f -printf '%P\0' | sort -z \
    | (cd "$stage" && xargs -0 -r md5sum) > "$stage/DEBIAN/md5sums"
  chmod 0644 "$stage/DEBIAN/md5sums" ${conffiles:+"$stage/DEBIAN/conffiles"}
  local size
  size="$(find "$stage" -path "$stage/DEBIAN" -prune -o \( -type f -printf '%s\n' -o -type d -printf '1024\n' \) \
    | awk '{ s += int(($1 + 1023) / 1024) } END { print s }')"
  {
    echo "Package: $pkg"
    echo "Version: $version"
    echo "Architecture: amd64"
    echo "Maintainer: Keeper developers <keeper@example.org>"
    echo "Installed-Size: $size"
    echo "Depends: $deps"
    echo "Section: admin"
    echo "Priority: optional"
    echo "Homepage: https://github.com/keeper/keeper"
    echo "Description: $(describe "$pkg")"
  } > "$stage/DEBIAN/control"
  find "$stage" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
  local deb="$out/${pkg}_${version}_amd64.deb"
  dpkg-deb --root-owner-group "${compress[@]}" --build "$stage" "$deb" >/dev/null
  rm -rf "$stage"
  echo "package: $deb ($(du -h "$deb" | cut -f1), installed $((size / 1024)) MB; node $node_version)"
}

for p in "${pkgs[@]}"; do build_one "$p"; done
