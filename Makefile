# kseg: build, test and development tasks.
#
#   make build    bin/kseg: this platform's release binary (static, reproducible)
#   make dist     every platform's binary, the images and SHA256SUMS in DIST
#   make image    the image tarball of this architecture's linux binary
#   make demo     build kseg, generate a partition, look around in it
#   make test     every test, quickly: long ones in their short form, the
#                 race detector where the code runs goroutines; the report
#                 page's browser tests skipped (KSEG_SKIP_BROWSER=1) when
#                 no Chromium is found
#   make check    every test in its long form, all under the race detector,
#                 the browser tests never skipped (what CI runs; .ci/run
#                 installs Debian's chromium)
#   make screenshots  docs/report-demo.png, docs/report-damaged.png and
#                 docs/report-damaged-dark.png: the report page in Chromium
#   make lint     gofmt, go vet, staticcheck
#   make bench    benchmarks on generated partitions, benchstat, targets
#
# Variables: GO, BIN, RACE (make test RACE= for a run without the race
# detector), TEST_JSON, FUZZTIME, FUZZMINIMIZETIME, BENCH,
# BENCH_SEGMENT_BYTES, BENCH_PARTITIONS, BENCH_COUNT, BENCH_OUT.
# Release variables: VERSION (default: git describe), DIST, IMAGE.

GO       ?= go
BIN      ?= bin/kseg
RACE     ?= -race
FUZZTIME ?= 10s
FUZZMINIMIZETIME ?= 3s
BENCH    ?= .
BENCH_SEGMENT_BYTES ?= 268435456
BENCH_PARTITIONS ?= 2000
BENCH_COUNT ?= 6
BENCH_OUT   ?= bin/bench.txt
# Empty: cmd/internal/releasetool asks git (describe --tags --always --dirty).
VERSION  ?=
DIST     ?= bin/dist
IMAGE    ?= bin/kseg-image.tar
# Every release build goes through cmd/internal/releasetool (cmd/internal/release): cgo
# off, -trimpath, no build id, symbols stripped, the version stamped in.
# The tool itself runs on this machine; GOOS and GOARCH from the
# environment choose what make build builds (GOOS=linux GOARCH=arm64 make build).
RELEASE  := GOOS= GOARCH= $(GO) run ./cmd/internal/releasetool

# honnef.co/go/tools v0.8.2 is the first release line built for go1.26
# (its go.mod says go 1.26.0); run through go run, nothing to install.
STATICCHECK_VERSION := v0.8.2
# golang.org/x/perf has no tagged releases: benchstat at a pinned commit.
BENCHSTAT_VERSION := v0.0.0-20260908200009-22c9c6c9d4da

.PHONY: all build dist image test check screenshots demo bench fuzz docs lint clean

all: lint test build

build:
	$(RELEASE) build -go "$(GO)" -version "$(VERSION)" -os "$(GOOS)" -arch "$(GOARCH)" -o $(BIN)

# The release directory: kseg-<os>-<arch> for every platform of
# release.Platforms (a build that breaks on one fails the target: CI runs
# it), kseg-image-linux-<arch>.tar for each image platform, SHA256SUMS.
dist:
	rm -rf $(DIST)
	$(RELEASE) dist -go "$(GO)" -version "$(VERSION)" -o $(DIST)

# The image tarball (docker load / podman load) of this machine's
# architecture, holding the linux binary built for it.
image:
	$(RELEASE) image -go "$(GO)" -version "$(VERSION)" -o $(IMAGE)

# The packages whose own code starts goroutines or shares memory between
# them (the read-ahead, verify's and find's workers, diff's cursors, the
# schema registry's cache): make test runs their tests under the race
# detector. cmd's own goroutines (the progress meter fed by workers, signal
# handling) are raced by RACE_CMD_TESTS; its other tests, which mostly
# drive the packages above or spawn kseg processes, run without it (under
# it they take most of ten minutes). race_test.go fails when a package
# starts goroutines and is not listed, or a name starts no test.
MODULE         := github.com/kseg/kseg
RACE_PACKAGES  := inspect inspect/internal/scan inspect/fileio inspect/find inspect/replica inspect/schemaregistry verify
RACE_CMD_TESTS := TestProgress|TestWarningClearsBar|TestInterrupt|TestRebuildInterrupted
TEST_JSON      ?= bin/test.json

# -count=1: the suite reads fixtures outside the module, which the test
# cache cannot see change. testdata/testtime runs the go test commands at
# once, prints what go test prints without -v, and ends with where the time
# went (the slowest packages and tests); every event goes to TEST_JSON.
GOTEST       = $(GO) test -json -count=1
race_pkgs    = $(addprefix $(MODULE)/,$(RACE_PACKAGES))
other_pkgs   = $(filter-out $(race_pkgs),$(shell $(GO) list ./...))

# The browser kseg report's page is tested in (cmd/report_browser_test.go):
# KSEG_CHROMIUM, else the first of these on PATH. Empty when none is.
CHROMIUM = $(shell for b in "$$KSEG_CHROMIUM" chromium chromium-browser google-chrome google-chrome-stable; do \
	[ -n "$$b" ] && command -v "$$b" && break; done)

# make test: the quick loop, every test, long ones in their -short form
# (docs/performance.md, "The test suite": a few minutes on 2 cores). On a
# machine without Chromium the browser tests are skipped, and said so;
# with one they run (KSEG_SKIP_BROWSER=1 make test skips them anyway).
test:
	@mkdir -p $(dir $(TEST_JSON))
	$(if $(CHROMIUM),,@echo "make test: no Chromium found: the report page's browser tests are skipped (apt-get install chromium runs them; make check never skips them)")
	$(if $(CHROMIUM),,KSEG_SKIP_BROWSER=1) $(GO) run ./testdata/testtime -json $(TEST_JSON) \
		'$(GOTEST) -short -timeout=15m $(RACE) $(race_pkgs)' \
		'$(GOTEST) -short -timeout=15m $(RACE) -run=^($(RACE_CMD_TESTS)) ./cmd' \
		'$(GOTEST) -short -timeout=15m $(other_pkgs)'

# make check: what CI runs (.ci/run): every test in its long form, every
# package under the race detector, the browser tests among them: without a
# browser they fail, saying how to install one (KSEG_SKIP_BROWSER is
# cleared).
check:
	@mkdir -p $(dir $(TEST_JSON))
	KSEG_SKIP_BROWSER= $(GO) run ./testdata/testtime -json $(TEST_JSON) '$(GOTEST) -race -timeout=90m ./...'

# The report page's screenshots in docs/ (TestReportScreenshots, in
# Chromium): the page on a demo data directory and on a damaged one, that
# one in the light and the dark theme.
screenshots:
	KSEG_SKIP_BROWSER= KSEG_SCREENSHOTS=$(abspath docs) $(GO) test -count=1 -run='^TestReportScreenshots$$' ./cmd

# A partition of 3 segments x 200 lz4 batches in a temporary directory (a
# batch every 10 s, with half an hour of silence after two thirds), the
# partition (kseg ls) and its traffic over time (kseg timeline), its
# segments, then the second segment's offset index, an offset lookup in
# that segment with every step, a time lookup, and the lookup again as
# JSON.
demo: build
	@set -eu; \
	dir=$$(mktemp -d); trap 'rm -rf "$$dir"' EXIT; \
	part="$$dir/orders-0"; \
	echo "\$$ kseg gen --segments 3 --batches 200 --compression lz4 --traffic stop $$part"; \
	$(BIN) gen --segments 3 --batches 200 --compression lz4 --traffic stop "$$part"; \
	echo; echo "\$$ kseg ls $$part"; \
	$(BIN) ls "$$part"; \
	echo; echo "\$$ kseg timeline --bucket 10m $$part"; \
	$(BIN) timeline --bucket 10m "$$part"; \
	echo; echo "\$$ kseg ls --segments $$part"; \
	$(BIN) ls --segments "$$part"; \
	set -- "$$part"/*.index; \
	echo; echo "\$$ kseg dump-index $$2"; \
	$(BIN) dump-index "$$2"; \
	echo; echo "\$$ kseg lookup --trace $$part 1500"; \
	$(BIN) lookup --trace "$$part" 1500; \
	echo; echo "\$$ kseg lookup-time $$part 2023-11-14T23:00:00Z"; \
	$(BIN) lookup-time "$$part" 2023-11-14T23:00:00Z; \
	echo; echo "\$$ kseg lookup -o json $$part 1500"; \
	$(BIN) lookup -o json "$$part" 1500

# Benchmarks on partitions written with kseg gen into a temporary
# directory (removed afterwards): the data sets the benchmark files
# document (benchData), with segments of BENCH_SEGMENT_BYTES (default
# 256 MiB: a few minutes on 2 cores; docs/performance.md records the 1 GiB
# run, BENCH_SEGMENT_BYTES=1073741824); the data dir of many small
# partitions has BENCH_PARTITIONS partitions (default 2000, 6 GiB; fewer
# for a quick run). Every benchmark runs BENCH_COUNT
# times; the raw output goes to BENCH_OUT, then benchstat summarises it and
# testdata/benchsummary prints the targets with the median of the runs.
# BENCH selects benchmarks as -bench does.
bench: build
	@set -eu; \
	d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
	s=$(BENCH_SEGMENT_BYTES); \
	gen() { set=$$1; name=$$2; shift 2; \
		$(BIN) gen -o json --records-per-batch 16 --value-size 1024 "$$@" "$$d/$$set/$$name" > /dev/null; }; \
	echo "writing benchmark partitions (segments of $$s bytes) under $$d"; \
	gen seg bench-0 --seed 1 --segments 1 --segment-bytes $$s; \
	gen part4 bench-0 --seed 2 --segments 4 --segment-bytes $$s; \
	for i in $$(seq 0 15); do gen many t-$$i --seed $$((10 + i)) --segments 1 --segment-bytes $$((s / 16)); done; \
	for c in gzip snappy lz4 zstd; do gen $$c bench-0 --seed 3 --segments 1 --segment-bytes $$((s / 4)) --compression $$c; done; \
	gen segs bench-0 --seed 4 --segments 256 --segment-bytes 1048576; \
	for i in $$(seq 0 63); do gen parts p-$$i --seed $$((100 + i)) --segments 3 --segment-bytes 2097152; done; \
	gen small bench-0 --seed 5 --segments 1 --segment-bytes $$s --records-per-batch 2 --value-size 150; \
	gen kib bench-0 --seed 5 --segments 1 --segment-bytes $$s --records-per-batch 1; \
	for i in $$(seq 0 $$(($(BENCH_PARTITIONS) - 1))); do gen datadir d-$$i --seed $$((1000 + i)) --segments 3 --segment-bytes 1048576; done; \
	echo "nproc: $$(nproc)"; \
	KSEG_BENCH_DATA="$$d" KSEG_BENCH_PARTITIONS=$(BENCH_PARTITIONS) KSEG_BIN="$(abspath $(BIN))" $(GO) test -run='^$$' -bench='$(BENCH)' -benchmem \
		-count=$(BENCH_COUNT) -timeout=120m ./... | tee $(BENCH_OUT); \
	$(GO) run golang.org/x/perf/cmd/benchstat@$(BENCHSTAT_VERSION) $(BENCH_OUT); \
	$(GO) run ./testdata/benchsummary $(BENCH_OUT); \
	if grep -q '^FAIL' $(BENCH_OUT); then echo "make bench: some benchmarks failed (see $(BENCH_OUT))"; exit 1; fi

# Every Fuzz target of every package, FUZZTIME each, starting from the
# committed seeds in <package>/testdata/fuzz/<target>/ (see
# docs/reliability.md). Minimizing a failing input is capped at
# FUZZMINIMIZETIME (unbounded, it can stall a run). A failing input is
# saved there too and, committed, becomes a regression test.
fuzz:
	@set -e; \
	for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test -list='^Fuzz' "$$pkg" | grep '^Fuzz' || true); do \
			echo "fuzz $$pkg $$target for $(FUZZTIME)"; \
			$(GO) test -run='^$$' -fuzz="^$$target\$$" -fuzztime=$(FUZZTIME) -fuzzminimizetime=$(FUZZMINIMIZETIME) "$$pkg"; \
		done; \
	done

# The command reference, generated from the cobra commands (cobra/doc):
# docs/reference/*.md and docs/man/*.1. cmd's TestDocsAreCurrent fails
# when a command's help changes and this was not run.
docs:
	$(GO) run cmd/gendocs.go docs

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt -l found unformatted files:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

clean:
	rm -rf bin
