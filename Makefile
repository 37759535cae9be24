# jobconform — see README.md. Every target builds what it needs first.
SHELL := /bin/bash

# The default Kubernetes release, and the releases the tests run at.
K8S_VERSION   ?= v1.37.1
TEST_VERSIONS ?= v1.37.1,v1.34.3
ARTIFACTS     ?= $(CURDIR)/_artifacts
export ARTIFACTS

GO         ?= go
JOBCONFORM := $(GO) run ./suites/cmd/jobconform

.PHONY: all run test unit bench binaries cluster vet fmt clean

all: test

## binaries: build (once; cached outside the checkout) the Kubernetes binaries the tests use
binaries:
	$(JOBCONFORM) build $(foreach v,$(subst $(comma), ,$(TEST_VERSIONS)),--k8s-version $(v))

comma := ,

# make run also runs the built-in controller of this release (its own expectations).
RUN_ALSO ?= v1.34.3
CONFORMANCE := $(GO) test ./suites/conformance -count=1 -timeout 90m -v

## run: the main job — the conformance suite on local clusters: built-in and reference
## controllers at K8S_VERSION, the built-in at RUN_ALSO; JUnit and JSON in $(ARTIFACTS)
run:
	$(JOBCONFORM) build --k8s-version $(K8S_VERSION) --k8s-version $(RUN_ALSO)
	@mkdir -p $(ARTIFACTS)/$(K8S_VERSION) $(ARTIFACTS)/$(RUN_ALSO)
	@status=0; \
	JOBCONFORM_K8S_VERSION=$(K8S_VERSION) $(CONFORMANCE) -args -ginkgo.no-color \
	  -ginkgo.junit-report=$(ARTIFACTS)/$(K8S_VERSION)/junit.xml -ginkgo.json-report=$(ARTIFACTS)/$(K8S_VERSION)/report.json || status=1; \
	JOBCONFORM_K8S_VERSION=$(RUN_ALSO) JOBCONFORM_CONTROLLERS=builtin $(CONFORMANCE) -args -ginkgo.no-color \
	  -ginkgo.junit-report=$(ARTIFACTS)/$(RUN_ALSO)/junit.xml -ginkgo.json-report=$(ARTIFACTS)/$(RUN_ALSO)/report.json || status=1; \
	echo "reports: $(ARTIFACTS)/$(K8S_VERSION) $(ARTIFACTS)/$(RUN_ALSO)"; exit $$status

## test: unit and integration tests (integration specs start real local clusters)
test: vet binaries
	JOBCONFORM_K8S_VERSIONS=$(TEST_VERSIONS) $(GO) test -p 1 -count=1 -timeout 80m ./...

## unit: only the tests that start no cluster
unit:
	$(GO) test -short -count=1 ./...

## bench: start-to-ready of the local provider (median of 5, binaries cached, 3 nodes),
## then the wall time of the whole catalog against both controllers
bench:
	$(JOBCONFORM) build --k8s-version $(K8S_VERSION)
	JOBCONFORM_K8S_VERSION=$(K8S_VERSION) $(GO) test -run '^$$' -bench StartToReady -benchtime 5x -count=1 ./suites/cluster/local/
	@mkdir -p $(ARTIFACTS); start=$$(date +%s); \
	JOBCONFORM_K8S_VERSION=$(K8S_VERSION) $(GO) test ./suites/conformance -count=1 -timeout 90m > $(ARTIFACTS)/bench-conformance.log 2>&1; status=$$?; \
	echo "catalog wall time: $$(( $$(date +%s) - start ))s (every scenario, built-in and reference, Kubernetes $(K8S_VERSION); log $(ARTIFACTS)/bench-conformance.log)"; \
	exit $$status

## cluster: a local cluster for poking at, until Ctrl-C
cluster:
	$(JOBCONFORM) cluster --k8s-version $(K8S_VERSION)

vet:
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf _artifacts
