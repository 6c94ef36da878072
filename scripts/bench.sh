#!/usr/bin/env bash
# `make bench`: runs every benchmark (after build and stack); each writes bench/results/<name>.json.
# Not part of `make test`: speed and memory targets are checked here, never by timed assertions.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench/results
for run in dist/bench/*/run.js dist/bench/cel/compare.js; do
  [ -f "$run" ] || continue
  echo "== $run"
  node "$run"
done
ls -1 bench/results/*.json
