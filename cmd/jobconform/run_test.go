package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/internal/release"
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

// The verdict table has a row per release, suite and kind of cluster: a
// suite on kubelet nodes or with feature gates is not folded into another.
func TestPrintVerdictsRows(t *testing.T) {
	runs := []reports.Run{
		{Version: "v1.37.1", Suite: "jobconform conformance", SpecVerdict: "PASS"},
		{Version: "v1.37.1", Suite: "jobconform conformance", SpecVerdict: "FAIL", Spec: "[reference] x", Failures: []string{"step 2: not reached\nmore"}},
		{Version: "v1.37.1", Suite: "jobconform conformance", SpecVerdict: "PASS", Nodes: "kubelet"},
		{Version: "v1.31.4", Suite: "jobconform conformance", SpecVerdict: "skip", Gates: "JobManagedBy=true"},
	}
	var b strings.Builder
	if failed := printVerdicts(&b, runs); failed != 1 {
		t.Errorf("failed = %d, want 1", failed)
	}
	for _, row := range []string{
		"v1.31.4      jobconform conformance (JobManagedBy=true)          0      0       1",
		"v1.37.1      jobconform conformance                              1      1       0",
		"v1.37.1      jobconform conformance (kubelet nodes)              1      0       0",
		"FAIL [reference] x (Kubernetes v1.37.1): step 2: not reached",
	} {
		found := false
		for _, line := range strings.Split(b.String(), "\n") {
			found = found || strings.Join(strings.Fields(line), " ") == strings.Join(strings.Fields(row), " ")
		}
		if !found {
			t.Errorf("the table lacks %q:\n%s", row, b.String())
		}
	}
}

// The verdicts say, per controller, what the differential verdict compared
// and what it did not judge; --require-oracle fails a run with any of the
// latter but for an accepted reason, and a run without it passes on the
// same runs.
func TestOracleNotJudgedNeverSilent(t *testing.T) {
	runs := []reports.Run{
		{Version: "v1.37.1", Suite: "conformance", Controller: "reference", Scenario: "a", Verdict: "PASS", SpecVerdict: "PASS", Oracle: &reports.Oracle{Compared: true}},
		{Version: "v1.37.1", Suite: "chaos", Controller: "reference", Scenario: "b", Verdict: "PASS", SpecVerdict: "PASS"},
		// Not judged for an accepted reason: counted, not failed.
		{Version: "v1.37.1", Suite: "conformance", Controller: "reference", Scenario: "c", Verdict: "PASS", SpecVerdict: "PASS", Oracle: &reports.Oracle{Note: "not compared with the built-in: racy: apart"}},
	}
	var b strings.Builder
	printVerdicts(&b, runs)
	if !strings.Contains(b.String(), "compared 1 (timed 0; not 1: not said ×1), not judged 2 (racy ×1; the chaos suite compares nothing with the built-in ×1), 1 for a reason not accepted") {
		t.Errorf("the verdicts lack the differential verdict's tally:\n%s", b.String())
	}
	for require, fails := range map[bool]bool{false: false, true: true} {
		res := &outcome{artifacts: t.TempDir(), runs: runs, requireOracle: require}
		err := res.verdict()
		if got := err != nil && strings.Contains(err.Error(), "--require-oracle: 1 runs were not compared"); got != fails {
			t.Errorf("requireOracle %v: %v", require, err)
		}
	}
}

// A job whose Ginkgo run selected no spec is told apart from one that ran
// (seen: make test's MultiKueue job ran 0 of 74 specs and passed).
func TestSelectedNone(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]bool{
		`[{"PreRunStats":{"TotalSpecs":74,"SpecsThatWillRun":0}}]`: true,
		`[{"PreRunStats":{"TotalSpecs":74,"SpecsThatWillRun":8}}]`: false,
		`not json`: false,
	} {
		path := filepath.Join(dir, "report.json")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := selectedNone(path); got != want {
			t.Errorf("%s: %v, want %v", body, got, want)
		}
	}
	if selectedNone(filepath.Join(dir, "missing.json")) {
		t.Error("a missing report")
	}
}

// The command resolves releases (the settings know none): "previous" and
// a short form are named in full, a release jobconform cannot run is
// refused, and the flags' help names the default releases.
func TestSettleReleases(t *testing.T) {
	o := options.Defaults()
	o.Run.Versions, o.Run.BuiltinAt = []string{release.Default[1:]}, []string{"previous"}
	if err := settle(&o); err != nil || o.Run.Versions[0] != release.Default || o.Run.BuiltinAt[0] != release.Previous {
		t.Errorf("settle = %v: --k8s-version %v, --builtin-at %v", err, o.Run.Versions, o.Run.BuiltinAt)
	}
	o = options.Defaults()
	o.Run.Versions = []string{"v1.30.0"}
	if err := settle(&o); err == nil || !strings.Contains(err.Error(), "--k8s-version") {
		t.Errorf("v1.30.0: settle = %v", err)
	}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	o = options.Defaults()
	addFlags(fs, &o)
	if u := fs.Lookup("k8s-version").Usage; !strings.Contains(u, release.Default) {
		t.Errorf("--k8s-version's help names no default: %s", u)
	}
	if u := fs.Lookup("builtin-at").Usage; !strings.Contains(u, release.Previous) {
		t.Errorf("--builtin-at's help names no previous release: %s", u)
	}
}
