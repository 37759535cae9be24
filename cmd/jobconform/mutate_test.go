package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/jobconform/jobconform/internal/mutants"
	"github.com/jobconform/jobconform/reports"
	"github.com/jobconform/jobconform/scenarios"
)

// Every fault has scenarios to run, named by features the catalog knows.
func TestEveryFaultHasScenarios(t *testing.T) {
	known := map[string]bool{}
	for _, f := range scenarios.Features {
		known[f] = true
	}
	for _, f := range mutants.All() {
		for _, l := range regexp.MustCompile(`[A-Za-z]+`).FindAllString(f.Labels, -1) {
			if !known[l] {
				t.Errorf("fault %s: label %q is no feature of the catalog", f.Name, l)
			}
		}
	}
	if n := len(mutants.All()); n != 56 {
		t.Errorf("%d faults: docs/mutation.md counts 56", n)
	}
}

func TestJudge(t *testing.T) {
	caught := []reports.Run{
		{Scenario: "a", Verdict: "PASS"},
		{Scenario: "b", Verdict: "FAIL", Failures: []string{"invariant start-time at ..."}, Violations: []reports.Violation{{Invariant: "start-time"}}},
		{Scenario: "c", Verdict: "FAIL", Failures: []string{"step 3 (await Suspended): not reached within 1m0s"}},
		{Scenario: "d", Verdict: "skip"},
	}
	ok, by, specs, errText := judge(caught)
	if !ok || specs != 3 || errText != "" || strings.Join(by, ";") != "b: invariant start-time;c: step 3 (await Suspended)" {
		t.Fatalf("caught: %v %v %d %q", ok, by, specs, errText)
	}
	ok, _, _, errText = judge([]reports.Run{{Scenario: "a", Verdict: "FAIL", Failures: []string{"harness error: create the Job: connection refused"}}})
	if ok || !strings.Contains(errText, "harness error") {
		t.Fatalf("a harness failure counted as a catch: %v %q", ok, errText)
	}
	ok, _, _, errText = judge([]reports.Run{{Scenario: "a", Verdict: "PASS"}})
	if ok || errText != "" {
		t.Fatalf("a mutant that passes is missed, not an error: %v %q", ok, errText)
	}
	if _, _, _, errText = judge(nil); errText != "no scenario ran" {
		t.Fatalf("nothing ran: %q", errText)
	}
}
