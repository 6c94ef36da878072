#!/usr/bin/env bash
# Builds the Temporal CLI and OpenBao from their Go modules into a cache outside the repo
# ($KEEPER_TOOLS, default ~/.cache/keeper-tools/<name>-<version>/), reusing what is there.
# Prints nothing but progress; exits non-zero with the reason when a build fails.
set -euo pipefail

TOOLS="${KEEPER_TOOLS:-$HOME/.cache/keeper-tools}"
TEMPORAL_VERSION=1.5.1
BAO_VERSION=2.6.2
BAO_COMMIT=dd9c19c37a878cf4a81b18efb8d6f0599c7da923
# Fallback when the Go module proxy refuses github.com/openbao/openbao (it answers 403 for every
# version on this workplace's proxy): Vault 1.14.2, the MPL-2.0 line OpenBao forked from. Same HTTP
# API for KV v1/v2, PKI and AppRole, same dev-mode flags. 1.14.2 because its code matches a
# published sdk tag (v0.9.2, the one its go.mod names); 1.14.0 and 1.14.10 do not. See docs/stack.md.
VAULT_VERSION=1.13.0
VAULT_SDK=v0.8.1
export GOFLAGS="${GOFLAGS:-} -mod=mod"
export CGO_ENABLED=0

need_go() {
  command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ] || {
    echo "build-tools: Go is not installed; install Go 1.22+ (it builds the Temporal CLI and OpenBao)" >&2; exit 2; }
  command -v go >/dev/null 2>&1 || export PATH="/usr/local/go/bin:$PATH"
}

temporal_bin() { echo "$TOOLS/temporal-$TEMPORAL_VERSION/temporal"; }
bao_bin() {
  if [ -x "$TOOLS/openbao-$BAO_VERSION/bao" ] || [ ! -x "$TOOLS/vault-$VAULT_VERSION/vault" ]; then
    echo "$TOOLS/openbao-$BAO_VERSION/bao"
  else
    echo "$TOOLS/vault-$VAULT_VERSION/vault"
  fi
}

build_temporal() {
  local out; out="$(temporal_bin)"
  [ -x "$out" ] && return 0
  if command -v temporal >/dev/null 2>&1 && temporal --version 2>/dev/null | grep -q "$TEMPORAL_VERSION"; then
    mkdir -p "$(dirname "$out")"; ln -sf "$(command -v temporal)" "$out"; return 0
  fi
  echo "build-tools: building Temporal CLI $TEMPORAL_VERSION (first time only, several minutes)" >&2
  local gobin; gobin="$(mktemp -d)"
  GOBIN="$gobin" go install -ldflags "-X github.com/temporalio/cli/temporalcli.Version=$TEMPORAL_VERSION" \
    "github.com/temporalio/cli/cmd/temporal@v$TEMPORAL_VERSION"
  mkdir -p "$(dirname "$out")"
  mv "$gobin/temporal" "$out.tmp" && mv "$out.tmp" "$out"
  rm -rf "$gobin"
}

build_bao() {
  local out; out="$(bao_bin)"
  [ -x "$out" ] && return 0
  if command -v bao >/dev/null 2>&1 && bao version 2>/dev/null | grep -q "v$BAO_VERSION"; then
    mkdir -p "$(dirname "$out")"; ln -sf "$(command -v bao)" "$out"; return 0
  fi
  echo "build-tools: building OpenBao $BAO_VERSION (first time only, several minutes)" >&2
  local dir src work
  dir="$(go mod download -json "github.com/openbao/openbao@$BAO_COMMIT" 2>/dev/null | sed -n 's/.*"Dir": "\(.*\)".*/\1/p' || true)"
  if [ -z "$dir" ]; then
    echo "build-tools: the Go module proxy does not serve github.com/openbao/openbao; building Vault $VAULT_VERSION (same API) instead" >&2
    build_vault; return 0
  fi
  work="$(mktemp -d)"; src="$work/openbao"
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
    go get "github.com/openbao/openbao/sdk/v2@${BAO_COMMIT:0:12}"
    go mod tidy
    go build -trimpath -o bao .
  )
  mkdir -p "$(dirname "$out")"
  mv "$src/bao" "$out.tmp" && mv "$out.tmp" "$out"
  rm -rf "$work"
}

build_vault() {
  local out="$TOOLS/vault-$VAULT_VERSION/vault"
  [ -x "$out" ] && return 0
  local dir work src
  dir="$(go mod download -json "github.com/hashicorp/vault@v$VAULT_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
  [ -n "$dir" ] || { echo "build-tools: go mod download of vault v$VAULT_VERSION failed" >&2; exit 1; }
  work="$(mktemp -d)"; src="$work/vault"
  cp -r "$dir" "$src"; chmod -R u+w "$src"
  (
    cd "$src"
    # The module zip has no api/ or sdk/ subtrees, so the local replaces must go; the
    # published versions that go.mod already requires are used instead.
    for m in api api/auth/approle api/auth/kubernetes api/auth/userpass sdk; do
      go mod edit -dropreplace "github.com/hashicorp/vault/$m"
    done
    go mod edit -require "github.com/hashicorp/vault/sdk@$VAULT_SDK"
    go build -trimpath -o vault .
  )
  mkdir -p "$(dirname "$out")"
  mv "$src/vault" "$out.tmp" && mv "$out.tmp" "$out"
  rm -rf "$work"
}

need_go
case "${1:-all}" in
  temporal) build_temporal ;;
  bao) build_bao ;;
  all) build_temporal; build_bao ;;
  path-temporal) temporal_bin ;;
  path-bao) bao_bin ;;
  *) echo "usage: build-tools.sh [all|temporal|bao|path-temporal|path-bao]" >&2; exit 2 ;;
esac
