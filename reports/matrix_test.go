package reports

import (
	"strings"
	"testing"
)

func TestWriteMatrix(t *testing.T) {
	runs := []Run{
		{Scenario: "a", Suite: "jobconform conformance", Controller: "builtin", Version: "v1.34.3", Features: []string{"suspend", "deadline"}, Verdict: "FAIL",
			Failures: []string{"invariant deadline-from-start at 10:00:00.000: failed at once — known upstream bug of Kubernetes v1.34.3 (X, releases <1.36.0): what goes wrong\nmore"}},
		{Scenario: "b", Suite: "jobconform chaos", Controller: "builtin", Version: "v1.34.3", Features: []string{"suspend"}, Verdict: "PASS"},
		{Scenario: "c", Controller: "builtin", Version: "v1.34.3", Features: []string{"managedBy"}, Verdict: "skip"},
		{Scenario: "a", Suite: "jobconform conformance", Controller: "builtin", Version: "v1.9.0", Features: []string{"suspend", "deadline"}, Verdict: "PASS"},
		{Scenario: "a", Controller: "broken", Version: "v1.9.0", Features: []string{"suspend"}, Verdict: "FAIL", Faults: []string{"x"}},
		{Scenario: "c", Suite: "jobconform conformance", Controller: "reference", Version: "v1.9.0", Gates: "JobManagedBy=true", Features: []string{"managedBy"}, Verdict: "PASS"},
		{Scenario: "c", Suite: "jobconform conformance", Controller: "reference", Version: "v1.34.3", Features: []string{"managedBy"}, Verdict: "PASS"},
	}
	var b strings.Builder
	if err := WriteMatrix(&b, runs); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"From 6 runs: v1.9.0 (conformance); v1.9.0 with JobManagedBy=true (conformance); v1.34.3 (chaos, conformance).\n",
		// A run on a cluster given feature gates is a row of its own.
		"| v1.9.0 with JobManagedBy=true | n/a | pass (1) | n/a |\n| v1.34.3 | n/a | pass (1) | n/a |",
		"| release | deadline | managedBy | suspend |",
		"| v1.9.0 | pass (1) | n/a | pass (1) |\n| v1.34.3 | **FAIL** [1] | n/a | **FAIL** [1] |",
		"1. builtin v1.34.3, a: invariant deadline-from-start at 10:00:00.000: failed at once — known upstream bug of Kubernetes v1.34.3 (X, releases <1.36.0)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("matrix lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "broken") {
		t.Errorf("a negative control is in the matrix:\n%s", got)
	}
}
