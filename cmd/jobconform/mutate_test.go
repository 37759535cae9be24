package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jobconform/jobconform/internal/mutants"
	"github.com/jobconform/jobconform/reports"
	"github.com/jobconform/jobconform/scenarios"
	"github.com/onsi/ginkgo/v2/types"
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
	// The docs' count is a claim: it follows the catalog.
	for _, doc := range []string{"../../README.md", "../../docs/mutation.md", "../../docs/architecture.md"} {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(\d+) realistic|from outside its code: (\d+)`).FindSubmatch(data)
		if m == nil {
			t.Errorf("%s no longer counts the mutants", doc)
			continue
		}
		if got := string(m[1]) + string(m[2]); got != strconv.Itoa(len(mutants.All())) {
			t.Errorf("%s counts %s mutants; internal/mutants has %d", doc, got, len(mutants.All()))
		}
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
	// --fail-fast: the specs stopped when another failed failed by being
	// stopped, which is no catch.
	ok, by, specs, _ = judge([]reports.Run{
		{Scenario: "a", Verdict: "PASS"},
		{Scenario: "b", Verdict: "FAIL", Interrupted: true, Failures: []string{"step 2 (await failed=1): not reached before the scenario's own timeout ran out"}},
	})
	if ok || specs != 1 || len(by) != 0 {
		t.Fatalf("an interrupted spec counted: %v %v %d", ok, by, specs)
	}
	if _, _, _, errText = judge(nil); errText != "no scenario ran" {
		t.Fatalf("nothing ran: %q", errText)
	}
}

// Coverage you can check: every "covered" row of docs/coverage.md names the
// faults its checks catch, held to the latest make mutate results kept in
// docs/mutation.json — each fault a mutant of internal/mutants, caught, and
// caught by one of the row's own checks (a scenario or invariant it names);
// a row whose faults only the differential verdict caught says so.
func TestCoverageRowsCaught(t *testing.T) {
	data, err := os.ReadFile("../../docs/mutation.json")
	if err != nil {
		t.Fatalf("the latest mutate results: %v (copy _artifacts/mutate/mutation.json there after make mutate)", err)
	}
	var results []mutant
	if err := json.Unmarshal(data, &results); err != nil {
		t.Fatal(err)
	}
	byFault := map[string]mutant{}
	for _, m := range results {
		byFault[m.Fault] = m
	}
	known := map[string]bool{}
	for _, m := range mutants.All() {
		known[m.Name] = true
	}
	page, err := os.ReadFile("../../docs/coverage.md")
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile("`([a-z0-9-]+)`")
	rows := 0
	for _, line := range strings.Split(string(page), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 6 || strings.TrimSpace(cells[2]) != "covered" {
			continue
		}
		_, faults, ok := strings.Cut(cells[4], "faults caught:")
		if !ok {
			t.Errorf("%s: a covered row names no fault its checks catch (\"faults caught: `mutant`\"): prove it, or call it partly", strings.TrimSpace(cells[1]))
			continue
		}
		rows++
		row, checks := strings.TrimSpace(cells[1]), map[string]bool{}
		for _, m := range name.FindAllStringSubmatch(cells[3], -1) {
			checks[m[1]] = true
		}
		for _, m := range name.FindAllStringSubmatch(faults, -1) {
			f := m[1]
			if !known[f] {
				t.Errorf("%s: fault %s is no mutant of internal/mutants", row, f)
				continue
			}
			r, ok := byFault[f]
			switch {
			case !ok:
				t.Errorf("%s: fault %s has no result in docs/mutation.json", row, f)
				continue
			case !r.Caught:
				t.Errorf("%s: fault %s was not caught in the latest results", row, f)
				continue
			}
			own, onlyDifferential := false, true
			for _, b := range r.By {
				scenario, what, _ := strings.Cut(b, ": ")
				check, _ := strings.CutPrefix(what, "invariant ")
				if checks[scenario] || (what != check && checks[check]) {
					own = true
					onlyDifferential = onlyDifferential && strings.HasPrefix(what, "differential ")
				}
			}
			switch {
			case !own:
				t.Errorf("%s: fault %s was caught by %v, none of them the row's own checks", row, f, r.By)
			case onlyDifferential && !strings.Contains(cells[4], "differential"):
				t.Errorf("%s: fault %s was caught by the differential verdict alone; the row must say so", row, f)
			}
		}
	}
	if rows == 0 {
		t.Fatal("no covered row names the faults it catches")
	}
}

// --rejudge reads the kept runs of an earlier mutate and judges them again:
// a fault whose only failing spec was interrupted is missed, not caught,
// and a fault without kept runs is an error naming it.
func TestJudgeKept(t *testing.T) {
	out := t.TempDir()
	spec := func(leaf string, state types.SpecState, failures ...string) types.SpecReport {
		res, _ := json.Marshal(reports.Result{Scenario: leaf, Controller: "reference", Failures: failures})
		return types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[reference] " + leaf, State: state,
			ReportEntries: types.ReportEntries{{Name: reports.EntryResult, Value: types.WrapEntryValue(string(res))}}}
	}
	keep := func(fault string, specs ...types.SpecReport) {
		dir := filepath.Join(out, fault)
		if s := (mutateSettings{focus: "x$"}); strings.HasSuffix(fault, "+focused") {
			dir = filepath.Join(out, s.subdir(strings.TrimSuffix(fault, "+focused")))
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal([]types.Report{{SuiteDescription: "jobconform conformance", SpecReports: specs}})
		if err := os.WriteFile(filepath.Join(dir, "report-conformance.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	all := mutants.All()
	keep(all[0].Name, spec("a", types.SpecStateFailed, "step 1 (await active=1): not reached"), spec("b", types.SpecStatePassed))
	keep(all[1].Name, spec("a", types.SpecStateInterrupted, "step 1 (await active=1): not reached"), spec("b", types.SpecStatePassed))
	results, err := judgeKept(out, all[:2])
	if err != nil {
		t.Fatal(err)
	}
	if !results[0].Caught || len(results[0].By) != 1 || results[1].Caught {
		t.Fatalf("judged: %+v", results)
	}
	if _, err := judgeKept(out, all[:3]); err == nil || !strings.Contains(err.Error(), all[2].Name) {
		t.Fatalf("a fault without kept runs: %v", err)
	}
	// A focused run (--focus) adds its catches to the full run's; the time
	// stays the one kept.
	kept, _ := json.Marshal([]mutant{{Fault: all[0].Name, Seconds: 7}})
	if err := os.WriteFile(filepath.Join(out, "mutation.json"), kept, 0o644); err != nil {
		t.Fatal(err)
	}
	keep(all[0].Name+"+focused", spec("x", types.SpecStateFailed, "step 0 (await failed=1): not reached"))
	keep(all[1].Name+"+focused", spec("x", types.SpecStatePassed))
	results, err = judgeKept(out, all[:2])
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a: step 1 (await active=1)", "x: step 0 (await failed=1)"}; !slices.Equal(results[0].By, want) || results[0].Specs != 3 || results[0].Seconds != 7 {
		t.Fatalf("a fault run in full and focused: %+v, want caught by %q over 3 specs", results[0], want)
	}
	if results[1].Caught || results[1].Specs != 2 {
		t.Fatalf("a fault missed in both runs: %+v", results[1])
	}
}

// The README's claim that the checks catch every mutant is held to the
// latest results: each mutant of internal/mutants has one, caught, and no
// result names a mutant that is gone.
func TestEveryMutantCaught(t *testing.T) {
	data, err := os.ReadFile("../../docs/mutation.json")
	if err != nil {
		t.Fatal(err)
	}
	var results []mutant
	if err := json.Unmarshal(data, &results); err != nil {
		t.Fatal(err)
	}
	caught := map[string]bool{}
	for _, m := range results {
		if _, err := mutants.Lookup(m.Fault); err != nil {
			t.Errorf("docs/mutation.json: %s is no mutant of internal/mutants any more", m.Fault)
		}
		caught[m.Fault] = m.Caught
	}
	for _, m := range mutants.All() {
		c, ok := caught[m.Name]
		switch {
		case !ok:
			t.Errorf("mutant %s has no result in docs/mutation.json: run make mutate ARGS=--faults=%s and merge its results", m.Name, m.Name)
		case !c:
			t.Errorf("mutant %s was not caught in the latest results", m.Name)
		}
	}
}
