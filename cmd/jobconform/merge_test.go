package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/jobconform/jobconform/suites/ginkgoreport"
)

// Two shards of one run, merged, read as the one run they split: the same
// runs with the same verdicts in report.html's input, every spec in the
// suite's JUnit report; a spec in both shards is refused.
func TestReportMerge(t *testing.T) {
	whole, err := ginkgoreport.ReadReports("../../suites/ginkgoreport/testdata/report.json")
	if err != nil {
		t.Fatal(err)
	}
	// The whole run: its conformance spec against two controllers, and a
	// chaos spec.
	conf := whole[0]
	other := conf.SpecReports[0]
	other.LeafNodeText = strings.Replace(other.LeafNodeText, "[builtin]", "[reference]", 1)
	other.State = types.SpecStateFailed
	other.Failure = types.Failure{Message: "step 2: not reached"}
	conf.SpecReports = append(conf.SpecReports, other)
	whole[0] = conf

	shard1 := []types.Report{whole[0], whole[1]}
	shard1[0].SpecReports = conf.SpecReports[:1]
	shard2 := []types.Report{whole[0]}
	shard2[0].SpecReports = conf.SpecReports[1:]
	shard2[0].SuiteSucceeded = false

	dir := t.TempDir()
	write := func(path string, reps []types.Report) {
		t.Helper()
		data, err := json.Marshal(reps)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i, shard := range [][]types.Report{shard1, shard2} {
		for _, rep := range shard {
			suite := strings.TrimPrefix(rep.SuiteDescription, "jobconform ")
			write(filepath.Join(dir, fmt.Sprintf("shard%d", i+1), "v1.37.1", "report-"+suite+".json"), []types.Report{rep})
		}
	}
	write(filepath.Join(dir, "whole", "v1.37.1", "report.json"), whole)
	out := filepath.Join(dir, "merged")
	err = reportMerge([]string{"--out", out, filepath.Join(dir, "shard1"), filepath.Join(dir, "shard2")})
	// The recorded chaos spec broke a promise; shard 2's spec failed by the
	// framework's message alone (its result is the built-in's, copied), a
	// spec that could not run.
	if err == nil || !strings.Contains(err.Error(), "1 specs failed: the controllers under test broke promises") || !strings.Contains(err.Error(), "1 specs failed without a verdict") {
		t.Errorf("merge: %v, want the failing specs of both shards (the recorded chaos one, shard 2's) to fail the merged run", err)
	}
	got, err := ginkgoreport.Load(filepath.Join(out, "v1.37.1", "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := ginkgoreport.Load(filepath.Join(dir, "whole", "v1.37.1", "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || len(got) != len(want) {
		t.Fatalf("merged: %d runs, the whole run %d (want 3)", len(got), len(want))
	}
	for i := range got {
		if g, w := got[i].Spec+" "+got[i].Verdict, want[i].Spec+" "+want[i].Verdict; g != w {
			t.Errorf("run %d: %s, the whole run has %s", i, g, w)
		}
	}
	junit, err := os.ReadFile(filepath.Join(out, "v1.37.1", "junit-conformance.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(junit), "prp-failed-sigterm"); n < 2 || !strings.Contains(string(junit), "[reference] prp-failed-sigterm") {
		t.Errorf("junit-conformance.xml lacks a shard's spec:\n%s", junit)
	}
	for _, f := range []string{"report.html", "summary.md", "v1.37.1/report-chaos.json", "v1.37.1/junit-chaos.xml"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("merged artifacts: %v", err)
		}
	}
	// The same shard twice: refused, its specs would count twice.
	err = reportMerge([]string{"--out", filepath.Join(dir, "again"), filepath.Join(dir, "shard1"), filepath.Join(dir, "shard1")})
	if err == nil || !strings.Contains(err.Error(), "ran in two of the reports merged") {
		t.Errorf("shard 1 twice: %v, want it refused", err)
	}
	// --out among the shards: refused.
	if err := reportMerge([]string{"--out", filepath.Join(dir, "shard1"), filepath.Join(dir, "shard1")}); err == nil {
		t.Error("--out a shard's own directory: accepted")
	}
}
