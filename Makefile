# gorxe build targets. `make test` is the gate every change passes; slow suites have their own targets.

GO          ?= go
PKGS        := ./...
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME    ?= 10s
SOAK_FAULTS ?= loss=0.05,reorder=0.02,dup=0.01,corrupt=0.001
SOAK_MINUTES ?= 10
BENCHTIME   ?= 1s
# What `gorxe version` says of a binary make builds: git describe of the checkout.
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null)

# Knobs of the benchmark report (see test/bench/report): run length, latency iterations, QP
# counts, idle QPs for the memory figure, where the report and every tool's output go, the
# README whose benchmark section is regenerated (empty to leave it), and any further flags.
BENCH_DURATION  ?= 2s
BENCH_LAT_ITERS ?= 10000
BENCH_QPS       ?= 1,16,256,1024
BENCH_IDLE_QPS  ?= 1024
BENCH_OUT       ?= bench-out
BENCH_README    ?= README.md
BENCH_FLAGS     ?=

.PHONY: all build test fuzz fuzz-long bench bench-report soak soak-udp soak-udp-long soak-udp-hog demo lint interop clean

all: build

# Every package, and the gorxe command as bin/gorxe, stamped with VERSION.
build:
	$(GO) build $(PKGS)
	$(GO) build -o bin/gorxe $(if $(VERSION),-ldflags "-X main.version=$(VERSION)") ./cmd/gorxe

# vet and the full race-enabled suite; stays within a few minutes.
test:
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 $(PKGS)

# Each fuzz target of each package for FUZZTIME (go test runs one fuzz target per invocation).
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$t"; \
	    $(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

# Every fuzz target for FUZZTIME (default 10 minutes here), keeping what the fuzzer found: go test
# writes new interesting inputs only to its cache, so they are copied into the package's
# testdata/fuzz/<Target>/, where plain `go test` replays them, and then replayed once: the
# cache keeps entries from before a change of a target's arguments, which no longer load.
# Minimization is bounded so the time goes to fuzzing.
fuzz-long: FUZZTIME = 10m
fuzz-long:
	@set -e; cache=$$($(GO) env GOCACHE)/fuzz; \
	for pkg in $$($(GO) list $(PKGS)); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$t"; \
	    $(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s $$pkg 2>&1 | tail -n 3; \
	    if [ -d "$$cache/$$pkg/$$t" ]; then \
	      mkdir -p "$$dir/testdata/fuzz/$$t"; cp -n "$$cache/$$pkg/$$t"/* "$$dir/testdata/fuzz/$$t/"; \
	      echo "   corpus: $$(ls "$$dir/testdata/fuzz/$$t" | wc -l) entries in testdata/fuzz/$$t"; \
	      $(GO) test -count=1 -run "^$$t\$$" $$pkg >/dev/null || \
	        echo "   the corpus does not replay (entries from before a change of the target's arguments?): go test -run '^$$t\$$' $$pkg"; \
	    fi; \
	  done; \
	done

# The micro-benchmarks, then the report: gorxe's tools as two processes against this machine's
# UDP ceiling measured in the same run, and perftest's C tools on gorxe's C library (built by the
# report with make clib) against gorxe's tools.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) $(PKGS)
	$(MAKE) bench-report

bench-report:
	$(GO) run ./test/bench/report -duration $(BENCH_DURATION) -lat-iters $(BENCH_LAT_ITERS) \
	  -qps $(BENCH_QPS) -idle-qps $(BENCH_IDLE_QPS) -out $(BENCH_OUT) \
	  $(if $(BENCH_README),-readme $(BENCH_README)) $(BENCH_FLAGS)

# 256 MiB of mixed RC traffic over 5% loss, 2% reorder, 1% duplication and 0.1% corruption,
# checked byte for byte (deterministic: fake clock, seeded faults).
soak:
	GORXE_SOAK=1 $(GO) test -count=1 -run 'TestStressSoak' -timeout 30m -v ./transport

# Two processes over real UDP loopback with GORXE_FAULTS: 1 GiB of mixed RC traffic (SEND, WRITE,
# READ, atomics, eight QPs), checked byte for byte, completions equal to posts. soak-udp-long runs
# 64 QPs for SOAK_MINUTES and requires goroutines, live heap and RSS to stay flat (the series is
# printed); soak-udp-hog keeps every CPU busy with another process meanwhile, at ACK timeout 12.
soak-udp:
	GORXE_SOAK_UDP=1 GORXE_FAULTS='$(SOAK_FAULTS)' $(GO) test -count=1 -run 'TestSoakUDP' -timeout 60m -v ./test/soak

soak-udp-long:
	GORXE_SOAK_UDP=1 SOAK_MINUTES=$(SOAK_MINUTES) GORXE_FAULTS='$(SOAK_FAULTS)' $(GO) test -count=1 -run 'TestSoakUDP' -timeout $$(( $(SOAK_MINUTES) + 30 ))m -v ./test/soak

soak-udp-hog:
	GORXE_SOAK_UDP=1 SOAK_HOG=1 GORXE_FAULTS='$(SOAK_FAULTS)' $(GO) test -count=1 -run 'TestSoakUDP' -timeout 60m -v ./test/soak

# The main job: two stacks on loopback doing real RDMA, narrated.
demo:
	$(GO) run ./cmd/gorxe demo

# The captures and ladder diagrams of docs/wire-walkthrough.md, made by gorxe itself: each
# exchange between two fresh devices on loopback, losses from a fixed fault seed.
.PHONY: walkthrough
walkthrough:
	$(GO) run ./cmd/gorxe demo -walkthrough docs/walkthrough
	@# The connection-manager section: rping server and client as two processes, the server
	@# capturing. The client retries until the server listens.
	$(GO) build -o docs/walkthrough/.gorxe ./cmd/gorxe
	@set -e; cd docs/walkthrough; rm -f cm-rping.pcapng; \
	GORXE_PORT=14793 GORXE_PCAP=cm-rping.pcapng ./.gorxe rping -s -a 127.0.0.2 -C 2 -v >/dev/null & srv=$$!; \
	for i in 1 2 3 4 5 6 7 8 9 10; do GORXE_PORT=14793 ./.gorxe rping -c -a 127.0.0.2 -C 2 -v >/dev/null 2>&1 && break; sleep 0.5; done; \
	wait $$srv; ./.gorxe trace cm-rping.pcapng -o cm-rping.svg; rm -f .gorxe

# gorxe against the Linux kernel's rxe (in qemu) with the rdma-core and perftest tools, both
# roles; needs root, installs its own packages, prints a pass/fail table.
interop:
	$(GO) run ./test/interop

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) run $(STATICCHECK) $(PKGS)
	@# Everything but gorxe exec's device view (Linux namespaces) builds on the other Unix systems.
	GOOS=darwin $(GO) build $(PKGS)

clean:
	$(GO) clean -testcache
	rm -rf bin build

# gorxe's drop-in libibverbs.so.1 (package clib): a cgo c-shared build against the installed
# rdma-core headers, with the version nodes and symbols of the installed libibverbs.so.1 and
# librdmacm.so.1 (the script and the private ABI number come from them), and librdmacm.so.1 as
# a symlink to the same file. CLIB_OUT must be an absolute path or one relative to here.
CLIB_OUT ?= build/clib
CC ?= cc
.PHONY: clib
clib:
	@mkdir -p $(CLIB_OUT)
	@set -e; out=$(abspath $(CLIB_OUT)); \
	pabi=$$($(GO) run ./clib/internal/vscript -o $$out/libgorxe.map \
	  $$($(CC) -print-file-name=libibverbs.so.1) $$($(CC) -print-file-name=librdmacm.so.1)); \
	CGO_ENABLED=1 CGO_CFLAGS="-O2 -g -DGORXE_PABI=$$pabi" $(GO) build -tags gorxe_clib -buildmode=c-shared \
	  -ldflags "-extldflags '-Wl,--version-script=$$out/libgorxe.map -Wl,-soname,libibverbs.so.1'" \
	  -o $$out/libibverbs.so.1 ./clib; \
	rm -f $$out/libibverbs.so.h; \
	ln -sf libibverbs.so.1 $$out/librdmacm.so.1
