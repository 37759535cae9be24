# jobconform — see README.md. Every target builds what it needs first.
SHELL := /bin/bash

# The default Kubernetes release, and the releases the tests run at: the same two
# as make run's (the default and the previous minor), so a newcomer builds two.
K8S_VERSION   ?= v1.37.1
TEST_VERSIONS ?= v1.37.1,v1.36.3
ARTIFACTS     ?= $(CURDIR)/_artifacts
export ARTIFACTS

GO         ?= go
# -trimpath keeps the checkout's path out of the build cache's keys: a fresh clone
# (CI's, a second working copy) reuses what an earlier clone compiled instead of
# compiling jobconform's packages and linking its binaries again (about 40 s of two
# cores before the first suite starts).
export GOFLAGS := $(strip $(filter-out -trimpath,$(GOFLAGS)) -trimpath)
JOBCONFORM := $(GO) run ./cmd/jobconform

.PHONY: all run test unit bench mutate matrix fidelity drill binaries cluster vet verify fmt clean

all: test

## binaries: build (once; cached outside the checkout) the Kubernetes binaries the tests use
binaries:
	$(JOBCONFORM) build $(foreach v,$(subst $(comma), ,$(TEST_VERSIONS)),--k8s-version $(v))
	$(JOBCONFORM) build --k8s-version $(K8S_VERSION) --kubelet

comma := ,

# make run also runs the built-in controller of this release (its own expectations):
# the previous minor.
RUN_ALSO ?= v1.36.3
# Conformance scenarios run in parallel Ginkgo processes against one cluster (a namespace
# each); they mostly wait on SIGTERM traps and backoffs, so many more processes than cores
# pay off (measured on 2 cores: 12 processes 112s, 24 processes 71s, CPU under 70%).
# Chaos specs each bring up a cluster of their own: CHAOS_PROCS clusters at once (6: 199s,
# CPU at times saturated; 12: no faster, every spec slower). Drills: one process each.
PROCS        ?= 24
CHAOS_PROCS  ?= 6
# make bench runs each suite this many times and prints the median.
BENCH_RUNS   ?= 3
DRILL_PROCS  ?= 4
KUBELET_PROCS ?= 6
GINKGO := $(GO) tool ginkgo
# The suites that judge controllers; SUITE_FLAGS adds Ginkgo flags, e.g.
# SUITE_FLAGS=--label-filter=podReplacementPolicy
SUITES ?= ./suites/conformance ./suites/chaos ./suites/drill
SUITE_FLAGS ?=
# NODES: what plays the local clusters' nodes, kwok (default) or kubelet (real kubelets
# on containerd; needs root and Debian's containerd, runc and busybox-static:
# hack/install-deps.sh installs them).
NODES ?=
procs-for = $(if $(filter kubelet,$(2)),$(KUBELET_PROCS),$(if $(filter ./suites/chaos,$(1)),$(CHAOS_PROCS),$(if $(filter ./suites/drill,$(1)),$(DRILL_PROCS),$(PROCS))))
# ginkgo-suites VERSION CONTROLLERS OUTDIR [SUITES] [NODES]: the suites (each on its own
# local cluster), reports in OUTDIR. --randomize-all lets the specs' priorities (longest
# first, suites/internal/harness/durations.json) order every spec.
# stop-on-interrupt: a recipe's shell stops at Ctrl-C (or TERM) instead of going on to its
# next suite. Ginkgo catches SIGINT, stops its suite and exits with a code of its own, and a
# shell whose child did not die of the signal carries on: Ctrl-C during the first suite of
# make run started the next one, on both streams.
stop-on-interrupt = trap 'echo "interrupted" >&2; exit 130' INT TERM;

# The suites run from test binaries built beforehand (build-bins), not from their packages.
define ginkgo-suites
JOBCONFORM_NODES=$(or $(5),$(NODES)) JOBCONFORM_K8S_VERSION=$(1) JOBCONFORM_CONTROLLERS=$(2) $(GINKGO) -p \
  --procs=$(call procs-for,$(or $(4),$(SUITES)),$(or $(5),$(NODES))) --randomize-all --keep-going --no-color --timeout=90m \
  --output-dir=$(3) --junit-report=junit.xml --json-report=report.json $(SUITE_FLAGS) $(call suite-bins,$(or $(4),$(SUITES)))
endef

## run: the main job — the conformance, chaos and drill suites on local clusters: built-in and
## reference controllers at K8S_VERSION, the built-in at RUN_ALSO; JUnit and JSON in $(ARTIFACTS)
# CONTROLLERS are judged at K8S_VERSION (JOBCONFORM_CONTROLLERS overrides it too).
CONTROLLERS ?= $(or $(JOBCONFORM_CONTROLLERS),builtin$(comma)reference)
run:
	$(JOBCONFORM) build --k8s-version $(K8S_VERSION) $(if $(RUN_ALSO),--k8s-version $(RUN_ALSO)) $(if $(filter kubelet,$(NODES)),--kubelet)
	@$(call build-bins,$(SUITES)) $(call run-suites,$(K8S_VERSION),$(CONTROLLERS),$(ARTIFACTS),$(RUN_ALSO))

# run-suites VERSION CONTROLLERS OUTDIR [ALSO]: each of SUITES at VERSION (reports in
# OUTDIR/VERSION-SUITE), the built-in at ALSO (OUTDIR/ALSO-SUITE), then report.html and
# summary.md in OUTDIR. Two streams, so that neither waits on the other's sleeping specs:
# in front, the conformance suites and the chaos suite at VERSION; beside them, the drill
# suite and the chaos suite at ALSO (output in OUTDIR/beside.log, verdicts printed at the end).
# suite-run VERSION CONTROLLERS OUTDIR SUITE: one suite, its report added to $$reports.
suite-run = mkdir -p $(3)/$(1)-$(notdir $(4)); reports="$$reports $(3)/$(1)-$(notdir $(4))/report.json"; \
  $(call ginkgo-suites,$(1),$(2),$(3)/$(1)-$(notdir $(4)),$(4)) || status=1;
in-suites = $(filter $(1),$(SUITES))
# The suites' test binaries and the reference controller, linked once for all the suite runs
# of a target, side by side. Go caches compiled packages, not linked test binaries: Ginkgo
# given a package links its test binary again for every run (make run ran five, about 7
# CPU-seconds each, each on its stream's critical path), and each suite linked its own
# reference controller. Ginkgo runs a prebuilt NAME.test as it runs the package; -s -w as
# Ginkgo links (a third less linking). JOBCONFORM_REFERENCE_BINARY set by the caller wins.
BIN           := $(abspath $(ARTIFACTS))/.bin
REFERENCE_BIN := $(BIN)/reference-controller
suite-bins     = $(foreach s,$(1),$(BIN)/$(notdir $(s)).test)
# build-bins SUITES: the test binaries of SUITES, and the reference controller.
build-bins = echo "building the test binaries of $(notdir $(1))$(if $(JOBCONFORM_REFERENCE_BINARY),, and the reference controller) in $(BIN)"; \
  mkdir -p $(BIN); \
  $(if $(JOBCONFORM_REFERENCE_BINARY),,$(GO) build -o $(REFERENCE_BIN) ./controller/cmd/reference-controller & ref=$$!;) \
  $(GO) test -c -ldflags='-s -w' -o $(BIN)/ $(1) || exit 1; \
  $(if $(JOBCONFORM_REFERENCE_BINARY),,wait $$ref || exit 1; export JOBCONFORM_REFERENCE_BINARY=$(REFERENCE_BIN);)
# Interrupted, each stream stops after its current suite, and the front one waits for the other.
define run-suites
status=0; reports=; beside=; \
trap 'echo "interrupted: waiting for the suites to stop" >&2; [ -z "$$beside" ] || wait $$beside; exit 130' INT TERM; \
$(if $(call in-suites,./suites/drill)$(if $(4),$(call in-suites,./suites/chaos)), \
  echo "running beside the other suites:$(if $(call in-suites,./suites/drill), the drill suite at $(1))$(if $(4),$(if $(call in-suites,./suites/chaos), then the chaos suite at $(4))); output in $(3)/beside.log"; \
  mkdir -p $(3); { status=0; $(stop-on-interrupt) \
    $(if $(call in-suites,./suites/drill),$(call suite-run,$(1),$(2),$(3),./suites/drill)) \
    $(if $(4),$(if $(call in-suites,./suites/chaos),$(call suite-run,$(4),builtin,$(3),./suites/chaos))) \
    exit $$status; } > $(3)/beside.log 2>&1 & beside=$$!; \
  $(if $(call in-suites,./suites/drill),reports="$$reports $(3)/$(1)-drill/report.json";) \
  $(if $(4),$(if $(call in-suites,./suites/chaos),reports="$$reports $(3)/$(4)-chaos/report.json";))) \
$(if $(call in-suites,./suites/conformance),$(call suite-run,$(1),$(2),$(3),./suites/conformance)) \
$(if $(4),$(if $(call in-suites,./suites/conformance),$(call suite-run,$(4),builtin,$(3),./suites/conformance))) \
$(if $(call in-suites,./suites/chaos),$(call suite-run,$(1),$(2),$(3),./suites/chaos)) \
if [ -n "$$beside" ]; then \
  echo "waiting for the suites beside ($(3)/beside.log)"; wait $$beside || status=1; \
  grep -E '^(Ran [0-9]+ of|SUCCESS!|FAIL!)' $(3)/beside.log; \
  sed -n '/^  jobconform [a-z]* verdicts/,/^  [0-9]* passed/p' $(3)/beside.log; \
fi; \
echo "JUnit and Ginkgo JSON:$$reports"; \
$(JOBCONFORM) report --out $(3) $$reports || status=1; \
exit $$status
endef

## test: unit and integration tests (integration specs start real local clusters, on kwok
## and on kubelet nodes), then the controller suites at K8S_VERSION in parallel processes,
## as make run runs them, and the conformance suite again on kubelet nodes; the fidelity
## table compares the two
test: verify binaries
	@$(stop-on-interrupt) $(call build-bins,$(sort $(SUITES) ./suites/conformance)) status=0; t=$(ARTIFACTS)/test; \
	JOBCONFORM_K8S_VERSIONS=$(TEST_VERSIONS) $(GO) test -p 1 -count=1 -timeout 80m \
	  $$($(GO) list ./... | grep -vE '/suites/(conformance|chaos|drill)$$') || status=1; \
	( $(call run-suites,$(K8S_VERSION),builtin$(comma)reference,$$t) ) || status=1; \
	mkdir -p $$t/kubelet-$(K8S_VERSION); \
	$(call ginkgo-suites,$(K8S_VERSION),builtin$(comma)reference,$$t/kubelet-$(K8S_VERSION),./suites/conformance,kubelet) || status=1; \
	$(JOBCONFORM) report --out $$t $$t/$(K8S_VERSION)-*/report.json $$t/kubelet-$(K8S_VERSION)/report.json || status=1; \
	$(JOBCONFORM) fidelity --kwok $$t/$(K8S_VERSION)-conformance/report.json --kubelet $$t/kubelet-$(K8S_VERSION)/report.json \
	  --out $$t/fidelity.md || status=1; \
	exit $$status

## unit: only the tests that start no cluster
unit:
	$(GO) test -short -count=1 ./...

## bench: start-to-ready of the local provider (median of 7, binaries cached; 3 kwok nodes,
## then 3 kubelet nodes; with each start-up phase's median and the CPU each process used to
## start and while idle), then the conformance and chaos
## suites against both controllers BENCH_RUNS times each (median wall time), with the reference
## controller built once beforehand, as make run does
# bench-suite SUITE: the suite BENCH_RUNS times at K8S_VERSION, then the median wall time.
define bench-suite
times=; for i in $$(seq $(BENCH_RUNS)); do \
  out=$(ARTIFACTS)/bench/$(notdir $(1))-$$i; rm -rf $$out; mkdir -p $$out; start=$$(date +%s.%N); \
  $(call ginkgo-suites,$(K8S_VERSION),builtin$(comma)reference,$$out,$(1)) > $$out/run.log 2>&1 || status=1; \
  t=$$(awk "BEGIN {printf \"%.0f\", $$(date +%s.%N) - $$start}"); times="$$times $$t"; \
  echo "  $(notdir $(1)) run $$i: $${t}s wall; $$(grep -hoE '^Ran [0-9]+ of [0-9]+ Specs in [0-9.]+ seconds' $$out/run.log) ($$(grep -hoE '^(SUCCESS|FAIL)!' $$out/run.log)); log $$out/run.log"; \
done; \
echo "$(notdir $(1)) suite, built-in and reference, Kubernetes $(K8S_VERSION), $(call procs-for,$(1)) processes: median $$(echo $$times | tr ' ' '\n' | sort -n | awk '{a[NR]=$$1} END {print a[int((NR+1)/2)]}')s wall of $(BENCH_RUNS) runs (set-up included; the test binaries are built beforehand)";
endef

bench:
	$(JOBCONFORM) build --k8s-version $(K8S_VERSION)
	JOBCONFORM_K8S_VERSION=$(K8S_VERSION) $(GO) test -run '^$$' -bench StartToReady -benchtime 7x -count=1 ./internal/cluster/internal/local/
	@$(stop-on-interrupt) $(call build-bins,./suites/conformance ./suites/chaos) status=0; $(call bench-suite,./suites/conformance) $(call bench-suite,./suites/chaos) exit $$status

## mutate: the conformance scenarios against the reference controller broken by each fault
## of controller/faults.go (FAULTS=a,b for some); prints the mutation score, writes
## $(ARTIFACTS)/mutate/mutation.md; fails unless every fault is caught
FAULTS ?=
mutate:
	$(JOBCONFORM) mutate --k8s-version $(K8S_VERSION) --procs $(PROCS) $(if $(FAULTS),--faults $(FAULTS))

## matrix: the suites (MATRIX_SUITES) against the built-in and the reference controller at
## every release of MATRIX_VERSIONS (each built on first use), reports in
## $(ARTIFACTS)/matrix/<release>/; then the release × feature matrix into README.md and one
## HTML report of every run. On 1.31 (JobManagedBy alpha, off by default, so the apiserver drops
## spec.managedBy) the reference controller runs on a cluster of its own with JobManagedBy=true
## ($(ARTIFACTS)/matrix/JobManagedBy/<release>/), a row of its own in the matrix.
# The newest patch of each minor whose modules the Go module proxy serves, with the checksum
# database's record (README, Release matrix, says which it refuses).
MATRIX_VERSIONS ?= v1.31.4,v1.32.5,v1.33.13,v1.34.10,v1.35.8,v1.36.4,v1.37.2
MATRIX_SUITES   ?= conformance,chaos
matrix-run = $(JOBCONFORM) run --k8s-version $(1) --suites $(MATRIX_SUITES) --controllers $(2) \
  --procs $(PROCS) --cluster-procs $(CHAOS_PROCS) --artifacts $(3) $(4)
matrix:
	@$(stop-on-interrupt) status=0; reports=; \
	for v in $(subst $(comma), ,$(MATRIX_VERSIONS)); do \
	  case $$v in \
	  v1.31.*) $(call matrix-run,$$v,builtin,$(ARTIFACTS)/matrix) || status=1; \
	    $(call matrix-run,$$v,reference,$(ARTIFACTS)/matrix/JobManagedBy,--feature-gates JobManagedBy=true) || status=1; \
	    reports="$$reports $(ARTIFACTS)/matrix/$$v/report.json $(ARTIFACTS)/matrix/JobManagedBy/$$v/report.json";; \
	  *) $(call matrix-run,$$v,builtin$(comma)reference,$(ARTIFACTS)/matrix) || status=1; \
	    reports="$$reports $(ARTIFACTS)/matrix/$$v/report.json";; \
	  esac; \
	done; \
	$(JOBCONFORM) report --out $(ARTIFACTS)/matrix $$reports || status=1; \
	$(JOBCONFORM) matrix --readme README.md $$reports || status=1; \
	exit $$status

## fidelity: the conformance catalog against the built-in controller at K8S_VERSION on kwok
## nodes and on kubelet nodes, compared (Job status and pod sequences); table in
## $(ARTIFACTS)/fidelity/fidelity.md
fidelity:
	$(JOBCONFORM) build --k8s-version $(K8S_VERSION) --kubelet
	@mkdir -p $(ARTIFACTS)/fidelity/kwok $(ARTIFACTS)/fidelity/kubelet
	@$(stop-on-interrupt) $(call build-bins,./suites/conformance) status=0; \
	$(call ginkgo-suites,$(K8S_VERSION),builtin,$(ARTIFACTS)/fidelity/kwok,./suites/conformance,kwok) || status=1; \
	$(call ginkgo-suites,$(K8S_VERSION),builtin,$(ARTIFACTS)/fidelity/kubelet,./suites/conformance,kubelet) || status=1; \
	$(JOBCONFORM) fidelity --kwok $(ARTIFACTS)/fidelity/kwok/report.json --kubelet $(ARTIFACTS)/fidelity/kubelet/report.json \
	  --out $(ARTIFACTS)/fidelity/fidelity.md || status=1; \
	exit $$status

## drill: the drill suite alone — DRILL=v1.36.3,v1.37.1,v1.36.3,v1.37.1 flies that path (releases
## built on first use) with the default drill's flights, DRILLS=name,... drills of
## scenarios/catalog/drills (default: upgrade-downgrade-upgrade,emulated-rollback);
## UNSUPPORTED_SKEW=true runs a path the version-skew policy forbids, labelled so
DRILL ?=
DRILLS ?=
UNSUPPORTED_SKEW ?=
drill:
	@mkdir -p $(ARTIFACTS)/drill
	@$(call build-bins,./suites/drill) status=0; \
	JOBCONFORM_DRILL_PATH=$(DRILL) JOBCONFORM_DRILLS=$(DRILLS) JOBCONFORM_UNSUPPORTED_SKEW=$(UNSUPPORTED_SKEW) \
	  $(call ginkgo-suites,$(K8S_VERSION),$(CONTROLLERS),$(ARTIFACTS)/drill,./suites/drill) || status=1; \
	$(JOBCONFORM) report --out $(ARTIFACTS)/drill $(ARTIFACTS)/drill/report.json || status=1; \
	exit $$status

## cluster: a local cluster for poking at, until Ctrl-C
cluster:
	$(JOBCONFORM) cluster --k8s-version $(K8S_VERSION)

vet:
	$(GO) vet ./...

## verify: gofmt, vet and the import rules of the layout (hack/verify.sh)
verify:
	hack/verify.sh

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf _artifacts
