package harness

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jobconform/jobconform/chaos"
	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/scenarios/oracle"
	"github.com/jobconform/jobconform/suites/internal/runner"
)

func observed(failed string) *oracle.Observation {
	return &oracle.Observation{Final: map[string]string{"failed": failed}, Pods: map[string]int{}, Events: map[string]int{}, Format: oracle.Format}
}

// With no built-in run of the scenario in the suite run, the other
// controller's spec runs one itself, keeps it, and is judged against it; a
// second controller's spec reuses what was kept.
func TestOracleRunsTheBuiltInWhenNoneRan(t *testing.T) {
	s := &scenarios.Scenario{Name: "s"}
	runs := 0
	o := &Oracle{Store: oracle.Store{Dir: t.TempDir()}, RunBuiltIn: func(context.Context, *scenarios.Scenario) *runner.Result {
		runs++
		return &runner.Result{Controller: "builtin", Observation: observed("0")}
	}}
	r := &runner.Result{Observation: observed("1")}
	o.Judge(context.Background(), s, runner.Reference, r)
	if len(r.Differences) != 1 || r.Differences[0].Field != "status.failed" || len(r.Failures()) != 1 {
		t.Fatalf("differences %v, failures %v", r.Differences, r.Failures())
	}
	again := &runner.Result{Observation: observed("0")}
	o.Judge(context.Background(), s, runner.Reference, again)
	if runs != 1 || len(again.Differences) != 0 || again.OracleNote != "" || !again.Compared || !r.Compared {
		t.Fatalf("built-in runs %d; second run: %v %q, compared %v", runs, again.Differences, again.OracleNote, again.Compared)
	}
}

// A compared run says so, with no difference too; a run not compared says
// why, --no-oracle included; the built-in's own runs are neither.
func TestOracleNeverSilent(t *testing.T) {
	s := &scenarios.Scenario{Name: "s"}
	off := &Oracle{Off: true}
	r := &runner.Result{Observation: observed("1")}
	off.Judge(context.Background(), s, runner.Reference, r)
	if r.Compared || !strings.Contains(r.OracleNote, "--no-oracle") {
		t.Errorf("--no-oracle: compared %v, note %q", r.Compared, r.OracleNote)
	}
	b := &runner.Result{Observation: observed("1")}
	off.Judge(context.Background(), s, runner.BuiltIn, b)
	if b.Compared || b.OracleNote != "" {
		t.Errorf("the built-in's own run: compared %v, note %q", b.Compared, b.OracleNote)
	}
	res := ResultOf(&runner.Result{Controller: "reference", Compared: true, Observation: observed("1")}, nil)
	if res.Oracle == nil || !res.Oracle.Compared || res.Oracle.Note != "" {
		t.Errorf("a compared run with no difference reports %+v", res.Oracle)
	}
}

// A built-in that broke a promise is no oracle: nothing is compared, and
// the run says why; nor is a scenario the built-in does not run.
func TestOracleNotes(t *testing.T) {
	s := &scenarios.Scenario{Name: "s"}
	store := oracle.Store{Dir: t.TempDir()}
	o := &Oracle{Store: store}
	o.Started(s)
	broken := &runner.Result{Controller: "builtin", Observation: observed("0"), Err: errString("boom")}
	if err := o.Keep(s, broken); err != nil {
		t.Fatal(err)
	}
	r := &runner.Result{Observation: observed("1")}
	o.Judge(context.Background(), s, runner.Reference, r)
	if len(r.Differences) != 0 || !strings.Contains(r.OracleNote, "broke a promise") {
		t.Fatalf("%v %q", r.Differences, r.OracleNote)
	}
	only := &scenarios.Scenario{Name: "t", Controllers: []string{"reference"}}
	r = &runner.Result{Observation: observed("1")}
	o.Judge(context.Background(), only, runner.Reference, r)
	if !strings.Contains(r.OracleNote, "not for the built-in") {
		t.Fatalf("%q", r.OracleNote)
	}
	kept := &Oracle{From: &oracle.Store{Dir: t.TempDir()}}
	r = &runner.Result{Observation: observed("1")}
	kept.Judge(context.Background(), s, runner.Reference, r)
	if !strings.Contains(r.OracleNote, "no kept run") {
		t.Fatalf("%q", r.OracleNote)
	}
	// A kept run of another release, or on other nodes, is no oracle here.
	other := observed("1")
	other.Version = "v1.36.3"
	if err := kept.From.Put("s", other); err != nil {
		t.Fatal(err)
	}
	r = &runner.Result{Observation: observed("1")}
	r.Observation.Version = "v1.37.1"
	kept.Judge(context.Background(), s, runner.Reference, r)
	if len(r.Differences) != 0 || !strings.Contains(r.OracleNote, "Kubernetes v1.36.3 on kwok nodes, this one of v1.37.1") {
		t.Fatalf("%v %q", r.Differences, r.OracleNote)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// Twice: the built-in runs twice per scenario, its noise excused, a racy
// pair never judged; a built-in spec that ended before keeping its run
// says so at once (Abandon), and a kept run is not overwritten by it.
func TestOracleTwice(t *testing.T) {
	ctx := context.Background()
	s := &scenarios.Scenario{Name: "s"}
	failed := []string{"0", "1"}
	o := &Oracle{Twice: true, Store: oracle.Store{Dir: t.TempDir()}, RunBuiltIn: func(context.Context, *scenarios.Scenario) *runner.Result {
		f := failed[0]
		failed = failed[1:]
		return &runner.Result{Controller: "builtin", Observation: observed(f)}
	}}
	if o.RunsOfBuiltIn() != 2 {
		t.Fatalf("runs of the built-in: %d", o.RunsOfBuiltIn())
	}
	r := &runner.Result{Observation: observed("2")}
	o.Judge(ctx, s, runner.Reference, r)
	if len(failed) != 0 || !r.Compared || len(r.Differences) != 1 || !strings.HasPrefix(r.Differences[0].Allowed, "noise: ") || len(r.Failures()) != 0 {
		t.Fatalf("left %v; compared %v, differences %v, failures %v", failed, r.Compared, r.Differences, r.Failures())
	}

	racy := &scenarios.Scenario{Name: "racy"}
	a, b := observed("0"), observed("0")
	a.Conditions, b.Conditions = []string{"Complete=True/"}, []string{"Failed=True/BackoffLimitExceeded"}
	if err := o.Keep(racy, &runner.Result{Observation: a}, &runner.Result{Observation: b}); err != nil {
		t.Fatal(err)
	}
	r = &runner.Result{Observation: observed("0")}
	o.Judge(ctx, racy, runner.Reference, r)
	if r.Compared || !strings.Contains(r.OracleNote, "racy: ") {
		t.Fatalf("racy: compared %v, note %q", r.Compared, r.OracleNote)
	}

	gone := &scenarios.Scenario{Name: "gone"}
	o.Started(gone)
	o.Abandon(gone, "ended early")
	r = &runner.Result{Observation: observed("0")}
	o.Judge(ctx, gone, runner.Reference, r)
	if r.Compared || !strings.Contains(r.OracleNote, "ended early") {
		t.Fatalf("abandoned: compared %v, note %q", r.Compared, r.OracleNote)
	}
	o.Abandon(racy, "ended early")
	if obs, _, _ := o.Store.Get("racy"); obs.Skipped != "" || obs.Racy == "" {
		t.Fatalf("Abandon overwrote a kept run: %+v", obs)
	}
}

// A kept run serves only a run of the same scenario, word for word, on a
// cluster of the same feature gates: a mismatch is said, never compared.
func TestOracleKeptRunKeyed(t *testing.T) {
	s := &scenarios.Scenario{Name: "s"}
	store := oracle.Store{Dir: t.TempDir()}
	kept := observed("0")
	kept.Scenario, kept.Gates = oracle.Fingerprint(s), "JobManagedBy=true"
	if err := store.Put("s", kept); err != nil {
		t.Fatal(err)
	}
	o := &Oracle{From: &store}
	for _, tc := range []struct {
		scenario, gates, note string
		format                int
	}{
		{oracle.Fingerprint(s), "JobManagedBy=true", "", oracle.Format},
		{oracle.Fingerprint(&scenarios.Scenario{Name: "s", Description: "edited"}), "JobManagedBy=true", "another version of this scenario", oracle.Format},
		{oracle.Fingerprint(s), "", "feature gates", oracle.Format},
		{oracle.Fingerprint(s), "JobManagedBy=true", fmt.Sprintf("a jobconform that observes otherwise (format %d, this one %d)", oracle.Format, oracle.Format+1), oracle.Format + 1},
	} {
		obs := observed("0")
		obs.Scenario, obs.Gates, obs.Format = tc.scenario, tc.gates, tc.format
		r := &runner.Result{Observation: obs}
		o.Judge(context.Background(), s, runner.Reference, r)
		switch {
		case tc.note == "" && (!r.Compared || r.OracleNote != ""):
			t.Errorf("same scenario and gates: compared %v, note %q", r.Compared, r.OracleNote)
		case tc.note != "" && (r.Compared || !strings.Contains(r.OracleNote, tc.note)):
			t.Errorf("want not compared for %q, got compared %v, note %q", tc.note, r.Compared, r.OracleNote)
		}
	}
}

// A scenario that kills the controller may miss any of its events (the
// kill takes the recorder's queue); one that stops it gently, or none,
// may not; the status is compared either way.
func TestOracleCrashLosesEvents(t *testing.T) {
	crash := func(crash bool) *scenarios.Scenario {
		return &scenarios.Scenario{Name: "s", Steps: []scenarios.Step{{Chaos: &chaos.Action{ControllerRestart: &chaos.Restart{Crash: crash}}}}}
	}
	for _, tc := range []struct {
		s     *scenarios.Scenario
		other string // failed
		fails int
	}{
		{crash(true), "0", 0},
		{crash(true), "1", 1},
		{crash(false), "0", 1},
		{&scenarios.Scenario{Name: "s"}, "0", 1},
	} {
		builtin := observed("0")
		builtin.Events = map[string]int{"Normal/SuccessfulDelete": 1}
		o := &Oracle{Store: oracle.Store{Dir: t.TempDir()}, RunBuiltIn: func(context.Context, *scenarios.Scenario) *runner.Result {
			return &runner.Result{Controller: "builtin", Observation: builtin}
		}}
		r := &runner.Result{Observation: observed(tc.other)}
		o.Judge(context.Background(), tc.s, runner.Reference, r)
		if got := len(r.Failures()); got != tc.fails {
			t.Errorf("%+v: failures %v, want %d", tc, r.Failures(), tc.fails)
		}
	}
}

// Spec, the part every suite shares: the built-in's run kept (run again
// with Twice, both kept, the second returned to be judged too), another
// controller's judged against it; a built-in spec that skipped keeps that.
func TestOracleSpec(t *testing.T) {
	ctx := context.Background()
	s := &scenarios.Scenario{Name: "s"}
	o := &Oracle{Twice: true, Store: oracle.Store{Dir: t.TempDir()}}
	runs := 0
	builtin := func(failed string) func() *runner.Result {
		return func() *runner.Result {
			runs++
			return &runner.Result{Controller: "builtin", Observation: observed(failed)}
		}
	}
	r, again, err := o.Spec(ctx, s, runner.BuiltIn, builtin("0"), builtin("1"))
	if err != nil || runs != 2 || r == nil || again == nil || again.Observation.Final["failed"] != "1" {
		t.Fatalf("built-in: runs %d, again %v, err %v", runs, again, err)
	}
	other := func() *runner.Result { return &runner.Result{Observation: observed("2")} }
	r, again, err = o.Spec(ctx, s, runner.Reference, other, nil)
	if err != nil || again != nil || !r.Compared || len(r.Differences) != 1 || r.Differences[0].Allowed == "" {
		t.Fatalf("reference: compared %v, differences %v, again %v, err %v", r.Compared, r.Differences, again, err)
	}

	skipped := &scenarios.Scenario{Name: "skipped"}
	runs = 0
	_, again, _ = o.Spec(ctx, skipped, runner.BuiltIn, func() *runner.Result { runs++; return &runner.Result{Skipped: "no kubelet"} }, builtin("0"))
	if runs != 1 || again != nil {
		t.Fatalf("a skipped built-in ran again: runs %d", runs)
	}
	r, _, _ = o.Spec(ctx, skipped, runner.Reference, other, nil)
	if r.Compared || !strings.Contains(r.OracleNote, "skipped") {
		t.Fatalf("compared with a skipped built-in: %q", r.OracleNote)
	}
}

// A built-in run made for the oracle that failed with no known bug named
// is run again, and its run again serves when it kept every promise; one
// whose failure a known bug explains is kept as it is.
func TestOracleRunsAnUnexplainedFailureAgain(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		first    runner.StepResult
		runs     int
		compared bool
	}{
		{"flake", runner.StepResult{Message: "not reached within 1m0s"}, 2, true},
		{"bug", runner.StepResult{Message: "not reached — known upstream bug", KnownBug: true}, 1, false},
	} {
		runs := 0
		o := &Oracle{Store: oracle.Store{Dir: t.TempDir()}, RunBuiltIn: func(context.Context, *scenarios.Scenario) *runner.Result {
			runs++
			r := &runner.Result{Controller: "builtin", Observation: observed("0")}
			if runs == 1 {
				r.Steps = []runner.StepResult{tc.first}
			}
			return r
		}}
		r := &runner.Result{Observation: observed("0")}
		o.Judge(ctx, &scenarios.Scenario{Name: "s"}, runner.Reference, r)
		if runs != tc.runs || r.Compared != tc.compared {
			t.Errorf("%s: built-in runs %d, compared %v (%q)", tc.name, runs, r.Compared, r.OracleNote)
		}
	}
}
