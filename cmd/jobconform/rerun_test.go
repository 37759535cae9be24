package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/suites/ginkgoreport"
)

// --rerun-failed narrows a run to the specs that failed in a report: their
// suites, releases and controllers, the focus matching them alone; a
// report where nothing failed, and artifacts that would overwrite the
// report, are refused.
func TestNarrowToFailed(t *testing.T) {
	reps, err := ginkgoreport.ReadReports("../../suites/ginkgoreport/testdata/report.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(reps []types.Report) string {
		t.Helper()
		d := filepath.Join(dir, "first", "v1.37.1")
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(reps)
		if err := os.WriteFile(filepath.Join(d, "report-conformance.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(dir, "first")
	}
	passed := func(rs []types.Report) []types.Report {
		var out []types.Report
		for _, r := range rs {
			r.SpecReports = slices.Clone(r.SpecReports)
			for i := range r.SpecReports {
				r.SpecReports[i].State, r.SpecReports[i].Failure = types.SpecStatePassed, types.Failure{}
			}
			out = append(out, r)
		}
		return out
	}
	reps = passed(reps)
	o := options.Defaults()
	o.Run.Artifacts = filepath.Join(dir, "rerun")
	if _, err := narrowToFailed(&o, write(reps)); err == nil || !strings.Contains(err.Error(), "no spec failed") {
		t.Fatalf("a report where all passed: %v", err)
	}
	spec := reps[0].SpecReports[0]
	reps[0].SpecReports[0].State, reps[0].SpecReports[0].Failure = types.SpecStateFailed, types.Failure{Message: "step 2: not reached"}
	first := write(reps)
	o = options.Defaults()
	o.Run.Artifacts = filepath.Join(dir, "rerun")
	n, err := narrowToFailed(&o, first)
	if err != nil || n != 1 {
		t.Fatalf("%d failed, err %v", n, err)
	}
	focus := regexp.MustCompile(o.Run.Focus)
	if !focus.MatchString(reps[0].SuiteDescription + " " + spec.FullText()) {
		t.Errorf("focus %q does not select the failed spec %q", o.Run.Focus, spec.FullText())
	}
	for _, other := range reps[0].SpecReports[1:] {
		if other.LeafNodeType == types.NodeTypeIt && focus.MatchString(reps[0].SuiteDescription+" "+other.FullText()) {
			t.Errorf("focus %q selects %q, which passed", o.Run.Focus, other.FullText())
		}
	}
	if len(o.Run.Suites) != 1 || len(o.Run.Versions) != 1 || o.Run.Versions[0] != "v1.37.1" {
		t.Errorf("suites %v, versions %v", o.Run.Suites, o.Run.Versions)
	}
	o = options.Defaults()
	o.Run.Artifacts = dir
	if _, err := narrowToFailed(&o, first); err == nil || !strings.Contains(err.Error(), "over the run it reads") {
		t.Errorf("a rerun writing over its report: %v", err)
	}
}
