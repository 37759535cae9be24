package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/reports"
	"github.com/jobconform/jobconform/scenarios/bugs"
	"github.com/jobconform/jobconform/scenarios/explore"
)

// explore writes its cases as scenario files that validate accepts, the
// same bytes for the same seed, and refuses a directory that holds
// anything else (it loses nothing, and runs nothing foreign).
func TestExploreWritesValidCases(t *testing.T) {
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	for _, dir := range []string{a, b, a} { // a twice: the same bytes are no clash
		if err := exploreCmd(context.Background(), []string{"--seed", "3", "--cases", "12", "--out", dir, "--write-only"}); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(a, "*.yaml"))
	if len(files) != 12 {
		t.Fatalf("%d files", len(files))
	}
	for _, f := range files {
		x, _ := os.ReadFile(f)
		y, err := os.ReadFile(filepath.Join(b, filepath.Base(f)))
		if err != nil || string(x) != string(y) {
			t.Errorf("%s differs between two runs of seed 3", filepath.Base(f))
		}
	}
	if err := validate([]string{a}); err != nil {
		t.Errorf("validate: %v", err)
	}
	var u usageError
	if err := exploreCmd(context.Background(), []string{"--seed", "4", "--out", a, "--write-only"}); !errors.As(err, &u) || !strings.Contains(err.Error(), "not a case of this seed") {
		t.Errorf("a directory with other cases in it: %v", err)
	}
	_ = os.WriteFile(files[0], []byte("edited"), 0o644)
	if err := exploreCmd(context.Background(), []string{"--seed", "3", "--cases", "12", "--out", a, "--write-only"}); !errors.As(err, &u) || !strings.Contains(err.Error(), "differs") {
		t.Errorf("an edited case: %v", err)
	}
	if b, _ := os.ReadFile(files[0]); string(b) != "edited" {
		t.Errorf("the edited case was overwritten")
	}
	for _, args := range [][]string{{"--cases", "0"}, {"--suites", "chaos"}, {"--no-oracle"}, {"extra"},
		{"--budget", "-1m"}, {"--budget", "30m", "--write-only"}, {"--budget", "30m", "--oracle-from", t.TempDir()}} {
		if err := exploreCmd(context.Background(), append(args, "--out", t.TempDir())); !errors.As(err, &u) {
			t.Errorf("%v: want a usage error, got %v", args, err)
		}
	}
}

// Round r of a budget is the seed's cases from r·n on: the rounds
// together are the same cases as one explore of them all.
func TestExploreRoundsContinueTheSeed(t *testing.T) {
	all := explore.Generate(5, 6)
	for r := range 3 {
		for i, c := range explore.GenerateFrom(5, r*2, 2) {
			if want := all[r*2+i].Scenario.Name; c.Scenario.Name != want {
				t.Errorf("round %d case %d is %s, want %s", r, i, c.Scenario.Name, want)
			}
		}
	}
}

// The summary counts each controller's cases by verdict, those timed among
// those compared, and the racy ones (not judged) apart.
func TestTallyExplore(t *testing.T) {
	runs := []reports.Run{
		{Scenario: "a", Controller: "builtin", Verdict: "PASS"},
		{Scenario: "b", Controller: "builtin", Verdict: "PASS"},
		{Scenario: "a", Controller: "reference", Verdict: "PASS", Oracle: &reports.Oracle{Compared: true, Timed: true}},
		{Scenario: "c", Controller: "reference", Verdict: "PASS", Oracle: &reports.Oracle{Compared: true, Untimed: "a disruption"}},
		{Scenario: "b", Controller: "reference", Verdict: "FAIL", Oracle: &reports.Oracle{Note: "not compared with the built-in: racy: the built-in's two runs ended apart"}},
	}
	by, failing := tallyExplore(runs)
	if g := *by["builtin"]; g != (exploreTally{passed: 2}) {
		t.Errorf("builtin: %+v", g)
	}
	if g := *by["reference"]; g != (exploreTally{passed: 2, failed: 1, compared: 2, timed: 1, racy: 1}) {
		t.Errorf("reference: %+v", g)
	}
	if len(failing) != 1 || failing[0] != "reference b" {
		t.Errorf("failing: %v", failing)
	}
}

// A round keeps the smallest candidate the same controller fails alike;
// one that fails otherwise, or fails another controller, is no step.
func TestFirstAlike(t *testing.T) {
	c := explore.Generate1(2, 0).Scenario
	cands := explore.Shrink(c)
	if len(cands) < 3 {
		t.Fatalf("case with %d candidates", len(cands))
	}
	runs := []reports.Run{
		{Scenario: cands[0].Name, Controller: "reference", Verdict: "FAIL", Failures: []string{"invariant other-one at 12:00:00.000 x"}},
		{Scenario: cands[1].Name, Controller: "builtin", Verdict: "FAIL", Failures: []string{"differential status.failed: built-in 1, this controller 2"}},
		{Scenario: cands[1].Name, Controller: "reference", Verdict: "PASS"},
		{Scenario: cands[2].Name, Controller: "reference", Verdict: "FAIL", Failures: []string{"harness error: x", "differential status.failed: built-in 0, this controller 3"}},
	}
	if got, failure := firstAlike(cands, runs, "reference", "differential status.failed"); got != cands[2] || failure != "differential status.failed: built-in 0, this controller 3" {
		t.Errorf("want candidate 3 with its own failure, got %v, %q", got, failure)
	}
	if got, _ := firstAlike(cands, runs, "reference", "invariant none"); got != nil {
		t.Errorf("want none, got %s", got.Name)
	}
}

// A shrunk case is written as a scenario file validate accepts, saying
// where it came from and what it shows.
func TestWriteShrunk(t *testing.T) {
	dir := t.TempDir()
	sh := shrunk{Case: "explore-2-0", Controller: "reference", Failure: "differential status.failed: built-in 1, this controller 2", Scenario: explore.Generate1(2, 0).Scenario, Rounds: 3, Cuts: 2, Stopped: "no smaller case fails alike"}
	if err := writeShrunk(dir, 2, &sh); err != nil {
		t.Fatal(err)
	}
	if err := validate([]string{sh.File}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(sh.File)
	for _, want := range []string{"# jobconform explore --seed 2", "name: explore-2-0-shrunk", "shrunk by 2 cuts", "differential status.failed"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("missing %q in\n%s", want, data)
		}
	}
}

// The run's summary.md lists each shrunk reproducer beside the case it
// came from; a built-in's is named a candidate upstream bug.
func TestAppendShrunk(t *testing.T) {
	dir := t.TempDir()
	summary := filepath.Join(dir, "summary.md")
	_ = os.WriteFile(summary, []byte("# verdicts\n"), 0o644)
	shrinks := []shrunk{
		{Case: "explore-2-3", Controller: "reference", Failure: "differential peak.active: built-in 2, this controller 4", File: "/a/shrunk/explore-2-3-shrunk.yaml", Cuts: 4, Rounds: 5, Stopped: "no smaller case fails alike"},
		{Case: "explore-2-9", Controller: "builtin", Failure: "invariant x | y", File: "/a/shrunk/explore-2-9-shrunk.yaml"},
	}
	if err := appendShrunk(summary, "/cases/seed-2", shrinks); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(summary)
	for _, want := range []string{"# verdicts", "## Shrunk reproducers", "| explore-2-3 | reference | differential peak.active", "/cases/seed-2/explore-2-3.yaml", "explore-2-3-shrunk.yaml (4 cuts in 5 rounds", "builtin (a candidate upstream bug)", `x \| y`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("missing %q in\n%s", want, data)
		}
	}
}

// The runs shrunk: failures of the controller under test before the
// built-in's, never a run an interrupt stopped.
func TestFailingRuns(t *testing.T) {
	got := failingRuns([]reports.Run{
		{Scenario: "a", Controller: "builtin", Verdict: "FAIL"},
		{Scenario: "b", Controller: "reference", Verdict: "FAIL", Interrupted: true},
		{Scenario: "c", Controller: "reference", Verdict: "PASS"},
		{Scenario: "d", Controller: "reference", Verdict: "FAIL"},
	})
	if len(got) != 2 || got[0].Scenario != "d" || got[1].Scenario != "a" {
		t.Fatalf("got %+v", got)
	}
}

// A built-in's run that known upstream bugs explain whole is no candidate
// and is not shrunk (v1.32.5's explore-10-3, kubernetes/kubernetes#134521,
// was shrunk for ten minutes); one with any other failure still is.
func TestFailingRunsLeaveKnownBugs(t *testing.T) {
	bug := bugs.ResumeStartTimeRejected
	known := "invariant suspend-events at 20:25:35.027 (seq 44, rv 4427): 6 Normal \"Resumed\" events for 0 such transitions — " + bug.Describe("v1.32.5")
	runs := []reports.Run{
		{Scenario: "k", Controller: "builtin", Verdict: "FAIL", Failures: []string{known, known}},
		{Scenario: "m", Controller: "builtin", Verdict: "FAIL", Failures: []string{known, "invariant ledger at …: failed=2, but its pods say 3"}},
		{Scenario: "r", Controller: "reference", Verdict: "FAIL", Failures: []string{known}},
		{Scenario: "k", Controller: "builtin", Verdict: "FAIL", Failures: []string{known}}, // its second run
	}
	got := failingRuns(runs)
	if len(got) != 2 || got[0].Scenario != "r" || got[1].Scenario != "m" {
		t.Fatalf("got %+v", got)
	}
	var b strings.Builder
	printKnownBugs(&b, runs)
	if want := "k (" + bug.ID + ")"; strings.Count(b.String(), want) != 1 || strings.Contains(b.String(), "m (") {
		t.Fatalf("printKnownBugs wrote %q, want %q alone", b.String(), want)
	}
}

// A built-in's failure the controller under test shares (explore-6-729:
// an await both timed out on) is still shown as a candidate, with the
// likelier cause said; one of another signature, or of another case, is not
// alike.
func TestCandidateFailedAlike(t *testing.T) {
	await := "step 3 (await Complete) timed out after 4m0s: the Job's conditions were []"
	b := reports.Run{Scenario: "explore-6-729", Controller: "builtin", Verdict: "FAIL", Failures: []string{await}}
	runs := []reports.Run{b,
		{Scenario: "explore-6-728", Controller: "reference", Verdict: "FAIL", Failures: []string{await}},
		{Scenario: "explore-6-729", Controller: "reference", Verdict: "FAIL", Failures: []string{"invariant ledger at …: failed=2"}},
	}
	if got := failedAlike(runs, b); got != "" {
		t.Fatalf("alike with %q: another case, another signature", got)
	}
	runs = append(runs, reports.Run{Scenario: "explore-6-729", Controller: "reference", Verdict: "FAIL", Failures: []string{"step 3 (await Complete) timed out after 4m0s: the Job's conditions were [Failed]"}})
	if got := failedAlike(runs, b); got != "reference" {
		t.Fatalf("failedAlike %q, want reference", got)
	}
	var w strings.Builder
	printShrunk(&w, []shrunk{{Case: b.Scenario, Controller: "builtin", Alike: "reference", Failure: await}})
	if !strings.Contains(w.String(), "a candidate upstream bug") || !strings.Contains(w.String(), "reference fails it alike") {
		t.Fatalf("printShrunk wrote %q", w.String())
	}
}

// A shrinking round runs every candidate to its end: --fail-fast, which
// explore of a broken controller uses, would let the first failing
// candidate interrupt the others, and a round would keep no cut.
func TestShrinkRoundsNeverFailFast(t *testing.T) {
	var o options.Options
	o.Run.FailFast = true
	if shrinkOptions(o).Run.FailFast {
		t.Fatal("a shrinking round runs --fail-fast")
	}
}

// explore --shard K/N: the shards of a seed's cases are disjoint, cover
// them all, and are the same on every machine (by index, across rounds).
func TestShardCases(t *testing.T) {
	for _, first := range []int{0, 20} {
		cs := explore.GenerateFrom(3, first, 20)
		seen := map[string]int{}
		for k := 1; k <= 3; k++ {
			for _, c := range shardCases(cs, first, k, 3) {
				seen[c.Scenario.Name]++
			}
		}
		if len(seen) != len(cs) {
			t.Errorf("from %d: three shards hold %d of %d cases", first, len(seen), len(cs))
		}
		for name, n := range seen {
			if n != 1 {
				t.Errorf("case %s in %d shards", name, n)
			}
		}
		again := shardCases(explore.GenerateFrom(3, first, 20), first, 2, 3)
		for i, c := range shardCases(cs, first, 2, 3) {
			if again[i].Scenario.Name != c.Scenario.Name {
				t.Errorf("shard 2 of 3 differs between two generations at %d", i)
			}
		}
	}
	if got := shardCases(explore.GenerateFrom(3, 0, 5), 0, 0, 0); len(got) != 5 {
		t.Errorf("no shard: %d of 5 cases", len(got))
	}
}
