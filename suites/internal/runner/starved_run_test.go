package runner

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/jobconform/jobconform/internal/starvation"
	"github.com/jobconform/jobconform/reports"
	"github.com/jobconform/jobconform/scenarios/invariants"
	"github.com/jobconform/jobconform/scenarios/timeline"
)

// testdata/starved-run is one whole run recorded beside 32 processes
// spinning on the two cores: the reference controller broken by the mutant
// terminating-refreshed-every-9s, scenario prp-failed-sigterm, kwok nodes,
// v1.37.1 — its Ginkgo report's result (with the meter's reading of the
// run) and its recording. Judged again from the recording, its timing
// verdicts fail as they did then and say the machine was starved; the same
// verdicts beside an idle reading do not; the verdicts that are no upper
// bound never say it.
func TestStarvedRecordedRun(t *testing.T) {
	data, err := os.ReadFile("testdata/starved-run/result.json")
	if err != nil {
		t.Fatal(err)
	}
	var recorded reports.Result
	if err := json.Unmarshal(data, &recorded); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("testdata/starved-run/timeline.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := timeline.ReadTimeline(zr)
	if err != nil {
		t.Fatal(err)
	}
	if recorded.Starvation == nil || !recorded.Starvation.Red() {
		t.Fatalf("the recorded run's reading is not red: %v", recorded.Starvation)
	}
	ctx := invariants.Context{Job: JobName, Finalizer: Reference.Finalizer, Version: recorded.Version, End: tl[len(tl)-1].Time}
	judged := invariants.CheckAll(ctx, tl)
	// The same late invariants fail as in the run.
	failedThen, failedNow := map[string]bool{}, map[string]bool{}
	for _, v := range recorded.Violations {
		if invariants.IsLate(v.Invariant) {
			failedThen[v.Invariant] = true
		}
	}
	for _, res := range judged {
		if len(res.Violations) > 0 && invariants.IsLate(res.Invariant) {
			failedNow[res.Invariant] = true
		}
	}
	if len(failedThen) == 0 {
		t.Fatal("the recorded run failed no timing verdict")
	}
	for inv := range failedThen {
		if !failedNow[inv] {
			t.Errorf("%s failed in the recorded run, not when judged again (now: %v)", inv, failedNow)
		}
	}
	for _, tc := range []struct {
		reading starvation.Reading
		starved bool
	}{{*recorded.Starvation, true}, {starvation.Reading{Samples: recorded.Starvation.Samples}, false}} {
		r := &Result{Invariants: judged, Starvation: tc.reading}
		late := 0
		for _, msg := range r.Failures() {
			says := strings.Contains(msg, "the machine was starved during this run")
			timing := false
			for inv := range failedNow {
				timing = timing || strings.HasPrefix(msg, "invariant "+inv+" ")
			}
			if says != (tc.starved && timing) {
				t.Errorf("reading %v: %q says starved: %v", tc.reading, msg, says)
			}
			if says {
				late++
			}
		}
		if tc.starved && late == 0 {
			t.Error("no timing verdict of the starved run says so")
		}
	}
}
