package ginkgoreport

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jobconform/jobconform/reports"

	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"
)

// testdata/report.json holds two real specs (trimmed) as Ginkgo wrote them:
// the built-in passing prp-failed-sigterm on v1.37.1, and a failing chaos run.
func TestLoad(t *testing.T) {
	runs, err := Load("testdata/report.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2", len(runs))
	}
	fail, pass := runs[0], runs[1] // sorted by scenario
	if pass.Scenario != "prp-failed-sigterm" || pass.Controller != "builtin" || pass.Version != "v1.37.1" || pass.Verdict != "PASS" || len(pass.Events) == 0 {
		t.Fatalf("pass run: %+v", pass)
	}
	if fail.Verdict != "FAIL" || len(fail.Violations) != 1 || fail.Violations[0].Invariant != "terminal-only-when-pods-terminal" || fail.Violations[0].Revision != 332 {
		t.Fatalf("fail run: verdict %s violations %+v", fail.Verdict, fail.Violations)
	}
	if _, err := Load("ginkgoreport_test.go"); err == nil || !strings.Contains(err.Error(), "not a Ginkgo JSON report") {
		t.Fatalf("a Go file loaded as a report: %v", err)
	}
}

func TestPrintVerdicts(t *testing.T) {
	rep := types.Report{SpecReports: types.SpecReports{
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "a", State: types.SpecStatePassed},
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "z", State: types.SpecStateFailed,
			ContainerHierarchyTexts: []string{"drill", "[builtin] upgrade"},
			Failure:                 types.Failure{Message: "flight broke\nmore detail"}},
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "c", State: types.SpecStateSkipped},
		{LeafNodeType: types.NodeTypeBeforeSuite, State: types.SpecStatePassed},
	}}
	var b bytes.Buffer
	PrintVerdicts(&b, "title", rep)
	out := b.String()
	// The failure comes first, named with its container, with its message's first line.
	want := "title\n  FAIL    0.0s  [builtin] upgrade z\n              flight broke\n  PASS    0.0s  a\n"
	if !strings.Contains(out, want) || strings.Contains(out, "more detail") || !strings.Contains(out, "1 passed, 1 failed, 1 skipped") {
		t.Fatalf("verdicts:\n%s\nwant them to contain:\n%s", out, want)
	}
}

func TestFailureWhy(t *testing.T) {
	var msg string
	g := gomega.NewGomega(func(m string, _ ...int) { msg = m })
	g.Expect(fmt.Errorf("kube-apiserver: %w", errors.New("not healthy after 3m0s (last answer: HTTP 500: [-]etcd failed)\nlog tail"))).
		NotTo(gomega.HaveOccurred(), "step 3: kube-apiserver v1.36.3 → v1.37.1")
	if got, want := failureWhy(msg), "step 3: kube-apiserver v1.36.3 → v1.37.1: kube-apiserver: not healthy after 3m0s (last answer: HTTP 500: [-]etcd failed)"; got != want {
		t.Errorf("Gomega's unexpected error:\n got %q\nwant %q\nfrom %q", got, want, msg)
	}
	if got := failureWhy("Expected\n    <int>: 1\nto equal\n    <int>: 2"); got != "Expected" {
		t.Errorf("other failure: %q", got)
	}

	// A scenario's failures, as the suites expect them: the first one, and
	// how many more (the spec's name already says which scenario).
	failures := []string{
		`invariant ready-not-above-active at 05:01:41.771 (seq 17, rv 690): ready=1 > active=0 — known upstream bug of Kubernetes v1.31.4 (kubernetes/kubernetes#139428, "quoted")`,
		"invariant ready-not-above-active at 05:01:41.787 (seq 19, rv 692): ready=1 > active=0",
		"step 3: timed out",
	}
	g.Expect(failures).To(gomega.BeEmpty(), "builtin on Kubernetes v1.31.4: a long description of the scenario")
	want := failures[0] + " (and 2 more)"
	if got := failureWhy(msg); got != want {
		t.Errorf("failures:\n got %q\nwant %q\nfrom %q", got, want, msg)
	}
	g.Expect(failures[2:]).To(gomega.BeEmpty(), "builtin on Kubernetes v1.31.4: a long description of the scenario")
	if got := failureWhy(msg); got != "step 3: timed out" {
		t.Errorf("one failure: got %q from %q", got, msg)
	}
}

// A report still in memory (ReportAfterSuite) carries the values, not
// their JSON: Runs reads them all the same.
func TestRunsOfAReportInMemory(t *testing.T) {
	type text string // as the harness's entries: a string kind
	rep := types.Report{SuiteDescription: "s", SpecReports: types.SpecReports{{
		LeafNodeType: types.NodeTypeIt, LeafNodeText: "[builtin] x", State: types.SpecStatePassed,
		ReportEntries: types.ReportEntries{{Name: reports.EntryResult, Value: types.WrapEntryValue(text(`{"scenario":"x","controller":"builtin","seconds":1,"figures":{"pods":1000,"toFinish":3}}`))}},
	}}}
	runs, err := Runs(rep)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Figures == nil || runs[0].Figures.Pods != 1000 || runs[0].Controller != "builtin" {
		t.Errorf("runs: %+v", runs)
	}
}

// A spec stopped before its end (an interrupt, --fail-fast) is a failure
// marked so: what failed in it may be the stop.
func TestRunsInterrupted(t *testing.T) {
	rep := types.Report{SuiteDescription: "s", SpecReports: types.SpecReports{
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[builtin] x", State: types.SpecStateInterrupted, Failure: types.Failure{Message: "Interrupted by Other Ginkgo Process"}},
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[builtin] y", State: types.SpecStateFailed, Failure: types.Failure{Message: "step 1"}},
	}}
	runs, err := Runs(rep)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || !runs[0].Interrupted || runs[0].Verdict != "FAIL" || runs[1].Interrupted {
		t.Errorf("runs: %+v", runs)
	}
}
