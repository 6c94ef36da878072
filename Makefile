# The two commands of the README: `make demo` and `make test`. Each installs what is missing,
# starts what is not running, and is safe to run twice.
SHELL := /bin/bash
.DEFAULT_GOAL := help

NPM_STAMP := node_modules/.keeper-installed

help:
	@echo "make demo        bring the stack up, build, init the first operator, start keeper and souls"
	@echo "make test        bring the stack up, build, run every test (ends with 'N passed, N failed')"
	@echo "make stack       start PostgreSQL, Redis, the secrets store and Temporal only"
	@echo "make stack-down  stop them (and the demo's keeper and souls)"
	@echo "make build       compile TypeScript into dist/"
	@echo "make bench       run the benchmarks (results in bench/results/*.json)"

# npm 11 writes lockfiles without other platforms' optional packages and then `npm ci` calls them
# out of sync; `npm install` with the same lockfile installs the same locked versions.
$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error 2>/dev/null || npm install --no-audit --no-fund --loglevel=error
	@touch $@

deps: $(NPM_STAMP)

build: deps
	npx tsc -p tsconfig.json
	@$(MAKE) --no-print-directory -s build-extra

build-extra:
	@if [ -f scripts/build-extra.sh ]; then bash scripts/build-extra.sh; fi

stack:
	scripts/stack.sh up

stack-down:
	scripts/stack.sh down

test: build stack
	node scripts/run-tests.js

test-unit: build
	node scripts/run-tests.js --unit

demo: build stack
	scripts/demo.sh

bench: build stack
	scripts/bench.sh

.PHONY: help deps build build-extra stack stack-down test test-unit demo bench
