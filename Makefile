# The two commands of the README: `make demo` and `make test`. Each installs what is missing,
# starts what is not running, and is safe to run twice.
SHELL := /bin/bash
.DEFAULT_GOAL := help

NPM_STAMP := node_modules/.keeper-installed
LOGS := $(or $(KEEPER_STACK_DIR),.stack)/logs

help:
	@echo "make demo        bring the stack up, build, init the first operator, start keeper and souls"
	@echo "make test        bring the stack up, build, run every test (ends with 'N passed, N failed')"
	@echo "make test-prod   the production rehearsal: Temporal server, sealed secrets store, two keepers (docs/production.md)"
	@echo "make stack       start PostgreSQL, Redis, the secrets store and Temporal only"
	@echo "make stack-down  stop them (and the demo's keeper and souls)"
	@echo "make build       compile TypeScript into dist/"
	@echo "make format      format the tree with Biome (make test fails on unformatted files)"
	@echo "make tools       build the stack's Go tools into ~/.cache/keeper-tools (first time only)"
	@echo "make bench       run the benchmarks (results in bench/results/*.json)"
	@echo "make package     build the Debian packages keeper, soul, soul-lint into build/packages (docs/install.md)"

# npm 11 writes lockfiles without other platforms' optional packages and then `npm ci` calls them
# out of sync; `npm install` with the same lockfile installs the same locked versions.
$(NPM_STAMP): package.json package-lock.json
	@mkdir -p $(LOGS)
	@echo "deps: installing npm packages from package-lock.json; log: $(LOGS)/npm.log"
	@npm ci --no-audit --no-fund --loglevel=error >$(LOGS)/npm.log 2>&1 \
	  || npm install --no-audit --no-fund --loglevel=error >>$(LOGS)/npm.log 2>&1 \
	  || { tail -n 20 $(LOGS)/npm.log | sed 's/^/    /'; echo "deps: error: npm could not install the packages; see $(LOGS)/npm.log; retry with: make deps"; exit 1; }
	@touch $@

deps: $(NPM_STAMP)

# proto/generated/ comes from the .proto files (scripts/gen-proto.js), before tsc reads it.
build: deps
	@node scripts/gen-proto.js
	@npx tsc -p tsconfig.json || { echo "build: error: TypeScript errors above; fix them and retry with: make build"; exit 1; }
	@$(MAKE) --no-print-directory -s build-extra

build-extra:
	@if [ -f scripts/build-extra.sh ]; then bash scripts/build-extra.sh; fi

# The Go tools, the Debian packages and the npm build do not wait for each other: `prepare` runs
# them side by side (the first run is mostly the Go builds; apt and npm fit beside them).
tools:
	@scripts/build-tools.sh all

packages:
	@scripts/stack.sh packages

stack: tools packages
	@scripts/stack.sh up

prepare:
	@$(MAKE) --no-print-directory -j4 build stack

stack-down:
	scripts/stack.sh down

# Unformatted files fail the run before any test starts (Biome, biome.json; `make format` fixes them).
test: prepare format-check
	node scripts/run-tests.js

# The production rehearsal alone (docs/production.md): the Temporal server (built once, about 3
# minutes), a sealed secrets store, two packaged keepers, real souls; `make test` runs it too.
test-prod: prepare
	node scripts/run-tests.js dist/test/prod/*.test.js

format-check: deps
	@npx biome format . >/dev/null 2>&1 || { npx biome format . 2>&1 | tail -n 30; echo "format: unformatted files (above); fix them with: make format"; exit 1; }

format: deps
	npx biome format --write .

test-unit: build
	node scripts/run-tests.js --unit

# The demo's Temporal runs behind mutual TLS (docs/stack.md), as a production keeper's must;
# KEEPER_TEMPORAL_MTLS=0 make demo runs it plain, with its Web UI.
demo: export KEEPER_TEMPORAL_MTLS ?= 1
demo: prepare
	scripts/demo.sh

bench: prepare
	scripts/bench.sh

# The Debian packages (docs/install.md); installs the Debian tools they need when missing.
package: build
	@scripts/package.sh

.PHONY: help deps build build-extra tools packages stack prepare stack-down test test-prod test-unit format format-check demo bench package
