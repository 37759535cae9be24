package main

import (
	"strings"
	"testing"

	"github.com/jobconform/jobconform/reports"
)

// A controller of which every run skipped was not judged: the run must not
// end as a pass.
func TestUnjudged(t *testing.T) {
	dropped := "Kubernetes v1.31.14 dropped spec.managedBy"
	runs := []reports.Run{
		{Controller: "builtin", Verdict: "PASS"},
		{Controller: "builtin", Verdict: "skip", Skipped: "scenario is for the reference controller(s) only"},
		{Controller: "reference", Verdict: "skip", Skipped: dropped},
		{Controller: "reference", Verdict: "skip", Skipped: dropped},
		{Controller: "broken-x", Verdict: "skip", Faults: []string{"x"}}, // a negative control
	}
	err := unjudged(runs)
	if err == nil || !strings.Contains(err.Error(), "no verdict on reference") || !strings.Contains(err.Error(), dropped) || strings.Contains(err.Error(), "builtin") || strings.Contains(err.Error(), "broken") {
		t.Fatalf("unjudged = %v", err)
	}
	if err := unjudged(runs[:2]); err != nil {
		t.Fatalf("the built-in was judged: %v", err)
	}
	// A set-up that skipped the whole suite: its specs carry no controller.
	cannot := "kubelet nodes: this machine cannot run containers: kubelet nodes need CAP_SYS_ADMIN"
	err = unjudged([]reports.Run{{Verdict: "skip", Skipped: cannot}, {Verdict: "skip", Skipped: cannot}})
	if err == nil || !strings.Contains(err.Error(), "no verdict: every spec was skipped") || !strings.Contains(err.Error(), cannot) {
		t.Fatalf("a suite skipped in its set-up: unjudged = %v", err)
	}
}
