package ginkgoreport

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

// A rerun's spec takes its first run's place, the first verdict kept
// beside it (the run's Again says it); a spec the first run lacks is an
// error.
func TestFold(t *testing.T) {
	first, err := ReadReports("testdata/report.json")
	if err != nil {
		t.Fatal(err)
	}
	spec := first[0].SpecReports[0]
	failed := spec
	failed.State, failed.Failure = types.SpecStateFailed, types.Failure{Message: "step 2: not reached"}
	first[0].SpecReports = append([]types.SpecReport{failed}, first[0].SpecReports[1:]...)
	first[0].SuiteSucceeded = false
	rerun := []types.Report{first[0]}
	rerun[0].SpecReports = []types.SpecReport{spec}
	folded, err := Fold(first, rerun)
	if err != nil {
		t.Fatal(err)
	}
	if !folded[0].SuiteSucceeded {
		t.Errorf("the suite still failed after its one failure passed again")
	}
	path := filepath.Join(t.TempDir(), "report.json")
	data, _ := json.Marshal(folded)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	runs, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range runs {
		if r.Spec == spec.FullText() {
			found = true
			if r.Verdict != "PASS" || !strings.Contains(r.Again, "--rerun-failed: FAIL in the first run: step 2: not reached") {
				t.Errorf("folded run: verdict %s, again %q", r.Verdict, r.Again)
			}
		}
	}
	if !found {
		t.Fatalf("the folded spec is gone: %v", runs)
	}
	other := rerun[0]
	other.SpecReports = []types.SpecReport{spec}
	other.SpecReports[0].LeafNodeText += "-not-in-the-first"
	if _, err := Fold(first, []types.Report{other}); err == nil {
		t.Error("a rerun's spec the first run lacks was folded in")
	}
}
