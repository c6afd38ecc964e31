# kseg: build, test and development tasks.
#
#   make demo     build kseg, generate a partition, look around in it
#   make test     the whole test suite, with the race detector
#   make lint     gofmt, go vet, staticcheck
#
# Variables: GO, BIN, RACE (make test RACE= for a quicker run without the
# race detector), FUZZTIME, BENCH.

GO       ?= go
BIN      ?= bin/kseg
RACE     ?= -race
FUZZTIME ?= 10s
BENCH    ?= .
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS  := -X github.com/kseg/kseg/cmd.version=$(VERSION)

# honnef.co/go/tools v0.8.2 is the first release line built for go1.26
# (its go.mod says go 1.26.0); run through go run, nothing to install.
STATICCHECK_VERSION := v0.8.2

.PHONY: all build test demo bench fuzz docs lint clean

all: lint test build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) .

# -count=1: the suite reads fixtures outside the module, which the test
# cache cannot see change. On 2 cores the race build costs a few minutes.
test:
	$(GO) test $(RACE) -count=1 ./...

# A partition of 3 segments x 200 lz4 batches in a temporary directory,
# then the second segment's offset index, an offset lookup in that segment
# with every step, a time lookup, and the lookup again as JSON.
demo: build
	@set -eu; \
	dir=$$(mktemp -d); trap 'rm -rf "$$dir"' EXIT; \
	part="$$dir/orders-0"; \
	echo "\$$ kseg gen --segments 3 --batches 200 --compression lz4 $$part"; \
	$(BIN) gen --segments 3 --batches 200 --compression lz4 "$$part"; \
	set -- "$$part"/*.index; \
	echo; echo "\$$ kseg dump-index $$2"; \
	$(BIN) dump-index "$$2"; \
	echo; echo "\$$ kseg lookup --trace $$part 1500"; \
	$(BIN) lookup --trace "$$part" 1500; \
	echo; echo "\$$ kseg lookup-time $$part 2023-11-14T22:13:24Z"; \
	$(BIN) lookup-time "$$part" 2023-11-14T22:13:24Z; \
	echo; echo "\$$ kseg lookup -o json $$part 1500"; \
	$(BIN) lookup -o json "$$part" 1500

bench:
	$(GO) test -run='^$$' -bench='$(BENCH)' -benchmem ./...

# Every Fuzz target of every package, FUZZTIME each. A failing input is
# saved under the package's testdata/fuzz/ and becomes a regression test.
fuzz:
	@set -e; \
	for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test -list='^Fuzz' "$$pkg" | grep '^Fuzz' || true); do \
			echo "fuzz $$pkg $$target for $(FUZZTIME)"; \
			$(GO) test -run='^$$' -fuzz="^$$target\$$" -fuzztime=$(FUZZTIME) "$$pkg"; \
		done; \
	done

# Placeholder: the command reference will be generated from the cobra
# commands (cobra/doc) into docs/, with a test that fails when it drifts.
docs:
	@echo "make docs: the generated command reference is not written yet; see docs/cli-contract.md"

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt -l found unformatted files:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

clean:
	rm -rf bin
