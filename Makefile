# Surveyor: `make run` starts the whole system on one machine (embedded NATS),
# `make test` runs every test, `make bench` the benchmarks. Go is needed, and
# npm for the OpenAPI lint; anything else is installed by the targets that
# use it.

GO       ?= go
SERVICES := ingest scanner sitemapper emailcheck
BINARIES := $(addprefix bin/,$(SERVICES))

.PHONY: all build run test test-unit test-deploy test-faults lint-openapi bench vet fmt clean fingerprints

all: build

build: $(BINARIES) bin/ingest-bare

bin/%: FORCE
	CGO_ENABLED=0 $(GO) build -trimpath -o $@ ./services/$*

# The intake benchmark's baseline: ingest's handler, storing nothing.
bin/ingest-bare: FORCE
	CGO_ENABLED=0 $(GO) build -trimpath -o $@ ./services/ingest/cmd/ingest-bare

FORCE:

## run: build, then start NATS (embedded in ingest), the API and every worker.
run: build
	@scripts/run.sh

## fingerprints: install the community Wappalyzer database into FINGERPRINTS_DIR
## (data/fingerprints unless set); FINGERPRINTS_REVISION, _URL, _SHA256 and
## _TIMEOUT are read from the environment too.
FINGERPRINTS_DIR ?= data/fingerprints
fingerprints:
	FINGERPRINTS_DIR=$(FINGERPRINTS_DIR) $(GO) run ./cmd/fingerprints

## test: vet, OpenAPI lint, unit and integration tests, deploy manifests, fault tests.
test: vet lint-openapi test-unit test-deploy test-faults

vet:
	$(GO) vet ./...
	$(GO) vet -tags faults ./test/faults/
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }

# @redocly/cli, pinned, from npm into .tools/ (git-ignored) on first use;
# Node.js and npm come from Debian's packages where the machine lacks them.
REDOCLY_VERSION := 2.77.0
REDOCLY         := .tools/node_modules/.bin/redocly

.tools/redocly-$(REDOCLY_VERSION):
	@command -v npm >/dev/null || { apt-get update && apt-get install -y nodejs npm; }
	npm install --prefix .tools --save-exact --no-audit --no-fund @redocly/cli@$(REDOCLY_VERSION)
	touch $@

## lint-openapi: the OpenAPI document ingest serves passes redocly's lint.
lint-openapi: .tools/redocly-$(REDOCLY_VERSION)
	$(REDOCLY) lint services/ingest/internal/api/openapi.json

test-unit:
	$(GO) test -count=1 -timeout 10m ./...

test-deploy:
	@if [ -f deploy/go.mod ]; then cd deploy && $(GO) test -count=1 -timeout 5m ./...; fi

# nats-server built from the module in go.mod: the fault tests run it as a
# process, standalone and as a three-node cluster.
bin/nats-server: go.mod
	CGO_ENABLED=0 $(GO) build -o $@ github.com/nats-io/nats-server/v2

test-faults: build bin/nats-server
	@if [ -d test/faults ]; then SURVEYOR_BIN=$(CURDIR)/bin $(GO) test -count=1 -timeout 10m -tags faults ./test/faults/...; fi

## bench: every benchmark, each printed as a ratio against its baseline.
bench: build
	@scripts/bench.sh

clean:
	rm -rf bin data
