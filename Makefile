# sixpin — the two set-up commands are `make run` and `make test`.
GO ?= go
GOFMT ?= $(shell $(GO) env GOROOT)/bin/gofmt
SCENARIO ?= scenarios/agentic-120k.yaml
# STATICCHECK is the linter at a pinned version: `go run` fetches it from
# the Go module proxy the first time (verified by the checksum database)
# and builds it; sixpin neither links it nor downloads anything when it runs.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: help run test bench bench-go bench-load gate-check build vet fmt lint smoke vendor-uplot

## run: the main job — build bin/sixpin, then replay SCENARIO with it against the built-in simulator
run: build
	bin/sixpin run $(SCENARIO)

## test: vet and the whole test suite (what CI runs, after fmt and lint)
test: vet
	$(GO) test -race -count=1 ./...

## vet: go vet over every package
vet:
	$(GO) vet ./...

## fmt: list the Go files gofmt would change, and fail if there is any
fmt:
	@files=$$($(GOFMT) -l .); if [ -n "$$files" ]; then echo "gofmt -w these files:"; echo "$$files"; exit 1; fi

## lint: staticcheck over every package, with its default checks
lint:
	$(GO) run $(STATICCHECK) ./...

## build: the sixpin binary in ./bin
build:
	@echo "building bin/sixpin (the first build takes a minute; later ones, seconds)"
	$(GO) build -o bin/sixpin ./cmd/sixpin

## smoke: a run that finishes in seconds
smoke:
	$(GO) run ./cmd/sixpin run scenarios/smoke.yaml --no-progress -o /tmp/sixpin-smoke.json

## bench: every speed claim in docs/speed.md — Go micro-benchmarks, the load benchmarks — and the gate's noise experiment
bench: bench-go bench-load gate-check

## bench-go: the Go micro-benchmarks
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./endpoint/ ./internal/h1/ ./prompt/ ./tokenizer/ ./sim/ ./analyze/ ./results/ ./record/

## bench-load: whole runs of bin/sixpin against `sixpin sim` in a second process
bench-load: build
	cd benchmarks && SIXPIN_BIN=$(CURDIR)/bin/sixpin $(GO) test -run '^$$' -bench . -skip GateNoise -benchtime 1x -timeout 45m .

## gate-check: the gate's A/A and A/B experiment (about fifty 20-second runs): its default rules
## against the noise between unchanged runs, and a decode 10% slower; the runs stay in bench-results/gate-check
gate-check: build
	mkdir -p bench-results/gate-check
	cd benchmarks && SIXPIN_BIN=$(CURDIR)/bin/sixpin SIXPIN_GATE_DIR=$(CURDIR)/bench-results/gate-check \
		$(GO) test -run '^$$' -bench GateNoise -benchtime 1x -timeout 60m .

## vendor-uplot: refresh internal/uplot from npm at UPLOT (a maintainer's step, never at run time;
## then put the printed checksums in internal/uplot/uplot.go and run its test)
UPLOT ?= 1.6.32
vendor-uplot:
	set -e; d=$$(mktemp -d); cd $$d; npm pack --silent uplot@$(UPLOT) >/dev/null; tar xzf uplot-$(UPLOT).tgz; \
		sha256sum uplot-$(UPLOT).tgz package/dist/uPlot.iife.min.js package/dist/uPlot.min.css; \
		cp package/dist/uPlot.iife.min.js package/dist/uPlot.min.css package/LICENSE $(CURDIR)/internal/uplot/; rm -rf $$d

## help: these targets and what each does
help:
	@sed -n 's/^## //p' $(MAKEFILE_LIST)
