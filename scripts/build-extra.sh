#!/usr/bin/env bash
# Extra build steps after tsc (run by `make build`): the workflow bundle, and the web UI (ui/app ->
# dist/ui-app, served at /ui).
# Idempotent and fast: skipped when dist/ui-app is newer than every source file of the app.
set -euo pipefail
cd "$(dirname "$0")/.."

# The wire contract's types and field tables (proto/generated/) come from the .proto files. `make build`
# generates them before tsc; a build that ran tsc first (npx tsc && build-extra.sh) compiles again
# when a .proto changed since the files were generated, so dist/ always matches the contract.
if ! node scripts/gen-proto.js --check 2>/dev/null; then
  node scripts/gen-proto.js
  npx tsc -p tsconfig.json
fi

# The keeper's workflow bundle, prebuilt once here instead of at every keeper start from this checkout
# (runs/bundle.ts; skipped while current).
node scripts/build-workflow-bundle.js

out=dist/ui-app/index.html
if [ -f "$out" ] && [ -z "$(find ui/app package-lock.json -newer "$out" -type f -print -quit)" ]; then
  exit 0
fi
# Type-check the app (strict, ui/app/tsconfig.json) before bundling; vite itself only strips types.
npx tsc -p ui/app/tsconfig.json
npx vite build --config ui/app/vite.config.ts
echo "web UI built into dist/ui-app"
