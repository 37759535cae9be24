# jobconform — see README.md and docs/. Each target is one command; the
# defaults live once, in Go (internal/options, internal/release). ARGS adds
# flags, e.g. make run ARGS='--label-filter podReplacementPolicy'; the
# JOBCONFORM_* variables are the flags' fallback (docs/running.md).
SHELL := /bin/bash
GO    ?= go
ARGS  ?=
# -trimpath keeps the checkout's path out of the build cache's keys: a fresh
# clone (CI's, a second working copy) reuses what an earlier one compiled.
export GOFLAGS := $(strip $(filter-out -trimpath,$(GOFLAGS)) -trimpath)
JOBCONFORM := $(GO) run ./cmd/jobconform

.PHONY: all run test unit bench soak mutate matrix fidelity drill scale multikueue binaries cluster dist vet verify hooks fmt clean

all: test

## run: the main job: conformance, chaos and drill suites on local clusters, the built-in and
## reference controllers at the default release, the built-in alone at the previous minor;
## every run of the reference compared with the built-in's, or not judged for an accepted reason
run:
	$(JOBCONFORM) run --suites conformance,chaos,drill --builtin-at previous --require-oracle $(ARGS)

## test: installs what it needs, go test of every package (integration specs start clusters),
## then the suites as make run runs them, the conformance suite on kubelet nodes, fidelity
test: verify
	$(JOBCONFORM) test $(ARGS)

## unit: only the tests that start no cluster
unit:
	$(GO) test -short -count=1 ./...

## bench: start-to-ready, judging 100 to 10,000 pods, then the conformance and chaos suites 3 times each (median)
bench:
	$(JOBCONFORM) bench $(ARGS)

## soak: verdicts under load: conformance and chaos 3 times against the built-in and the reference
## beside 2 spinning processes on kwok; false failures per 1,000 specs (35 minutes on 2 cores; docs/performance.md)
soak:
	$(JOBCONFORM) soak --rounds 3 --load 2 $(ARGS)

## mutate: the conformance scenarios against the reference controller broken by each fault
## (87 mutants: 77 took 79 minutes on 2 cores when last run whole, the built-in now run twice first; docs/mutation.md)
mutate:
	$(JOBCONFORM) mutate $(ARGS)

## matrix: conformance and chaos at every release of the matrix, into docs/matrix.md (75 min warm, 2½ h cold)
matrix:
	$(JOBCONFORM) matrix --run --out docs/matrix.md $(ARGS)

## fidelity: the conformance catalog on kwok and on kubelet nodes, compared
fidelity:
	$(JOBCONFORM) run --suites conformance --controllers builtin --kubelet-conformance --artifacts _artifacts/fidelity $(ARGS)

## drill: the drill suite alone (ARGS='--drill-path v1.36.3,v1.37.1,v1.36.3,v1.37.1', '--drills a,b')
drill:
	$(JOBCONFORM) run --suites drill $(ARGS)

## scale: the scale suite alone, the built-in, the reference and a slowed reference side by side:
## SCALE=1k (default) 1,000-pod Jobs on 100 kwok nodes, about 15 minutes on 2 cores;
## SCALE=10k 10,000-pod Jobs on 1,000 kwok nodes, about 2 h 20 min (8 h limit; docs/scale.md)
SCALE ?= 1k
scale:
	$(JOBCONFORM) run --suites scale --scale $(SCALE) $(ARGS)

## multikueue: the conformance catalog against Kueue's MultiKueue on a manager and a worker cluster
## (about 8 minutes on 2 cores, and 6 more the first time to build Kueue; docs/dispatchers.md)
multikueue:
	$(JOBCONFORM) run --suites conformance --controllers multikueue --artifacts _artifacts/multikueue $(ARGS)

## binaries: build (once; cached outside the checkout) the releases the tests use, and a kubelet
binaries:
	$(JOBCONFORM) build --kubelet --k8s-version default --k8s-version previous

## cluster: a local cluster for poking at, until Ctrl-C
cluster:
	$(JOBCONFORM) cluster $(ARGS)

## dist: release archives (the static binary, LICENSE, README.md) for linux/amd64 and linux/arm64,
## and SHA256SUMS, in _dist; VERSION=v0.3.0 stamps the version (default: git describe); about 3
## minutes a platform on 2 cores, the binary of this machine's platform run to check what it says
VERSION ?=
dist:
	$(GO) run ./hack/dist -version "$(VERSION)" -out _dist linux/amd64 linux/arm64

vet:
	$(GO) vet ./...

## hooks: use the repository's git hooks (.githooks: commit subjects of at most 72 characters)
hooks:
	git config core.hooksPath .githooks

## verify: gofmt, vet, the import rules of the layout and the docs' links (hack/verify.sh)
verify:
	hack/verify.sh

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf _artifacts
