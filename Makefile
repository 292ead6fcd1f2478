# gorxe build targets. `make test` is the gate every change passes; slow suites have their own targets.

GO          ?= go
PKGS        := ./...
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME    ?= 10s
BENCHTIME   ?= 1s

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

.PHONY: all build test fuzz bench bench-report soak demo lint interop clean

all: build

build:
	$(GO) build $(PKGS)

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

# The micro-benchmarks, then the report: gorxe's tools as two processes against this machine's
# UDP ceiling measured in the same run.
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

# The main job: two stacks on loopback doing real RDMA, narrated.
demo:
	$(GO) run ./cmd/gorxe demo

# The captures and ladder diagrams of docs/wire-walkthrough.md, made by gorxe itself: each
# exchange between two fresh devices on loopback, losses from a fixed fault seed.
.PHONY: walkthrough
walkthrough:
	$(GO) run ./cmd/gorxe demo -walkthrough docs/walkthrough

# gorxe against the Linux kernel's rxe (in qemu) with the rdma-core and perftest tools, both
# roles; needs root, installs its own packages, prints a pass/fail table.
interop:
	$(GO) run ./test/interop

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) run $(STATICCHECK) $(PKGS)

clean:
	$(GO) clean -testcache
