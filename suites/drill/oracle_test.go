package drill

import (
	"context"
	"strings"
	"testing"

	"github.com/onsi/gomega"

	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/scenarios/oracle"
	"github.com/jobconform/jobconform/suites/internal/harness"
	"github.com/jobconform/jobconform/suites/internal/runner"
)

// A flight is kept under a key of its drill, itself and its state, a file
// name whatever the drill is called; one that lives through a change may
// miss events, one started in the last state may not. Another
// controller's flight is compared with the built-in's of the same key,
// and not where the built-in's JobManagedBy gate is off.
func TestFlightOracle(t *testing.T) {
	gomega.RegisterTestingT(t)
	d := &scenarios.Drill{Name: "path v1.36.3→v1.37.1", Path: []scenarios.DrillState{{Version: "v1.36.3"}, {Version: "v1.37.1"}}}
	f := &scenarios.Scenario{Name: "flight-sigterm"}
	early, last := keyed(d, 0, f), keyed(d, 1, f)
	if strings.ContainsAny(early.Name, " /→") || early.Name == last.Name || f.Name != "flight-sigterm" {
		t.Fatalf("keys %q %q (flight %q)", early.Name, last.Name, f.Name)
	}
	if early.Oracle.MayLose["events."] == "" || last.Oracle.MayLose != nil {
		t.Fatalf("mayLose: early %v, last %v", early.Oracle.MayLose, last.Oracle.MayLose)
	}
	// A flight through a change may differ only in why a refused creation
	// or deletion was refused (the restarting apiserver's reason).
	if len(early.Oracle.Differ) != 2 || early.Oracle.Differ["messages.event Warning/FailedCreate"] == "" || early.Oracle.Differ["status.failed"] != "" || f.Oracle.Differ != nil {
		t.Fatalf("a flight the drill does not disturb may differ: %v (the flight's own: %v)", early.Oracle.Differ, f.Oracle.Differ)
	}
	d.TerminateAtSwap = []string{"flight-sigterm"}
	if s := keyed(d, 0, f); s.Oracle.Differ["status.failed"] == "" || keyed(d, 1, f).Oracle.Differ != nil {
		t.Fatalf("a flight whose pods the drill deletes at a change: %v", s.Oracle.Differ)
	}

	theOracle = &harness.Oracle{Store: oracle.Store{Dir: t.TempDir()}}
	obs := func(failed string) *oracle.Observation {
		return &oracle.Observation{Final: map[string]string{"failed": failed}, Pods: map[string]int{}, Events: map[string]int{"Normal/Completed": 1}}
	}
	run := &drillRun{flown: []flown{{state: 1, flight: f, result: &runner.Result{Observation: obs("0")}}}}
	keepFlights(d, map[string]*scenarios.Scenario{"flight-sigterm": f}, run, nil)
	d.Flights = []string{"flight-sigterm"}
	keepFlights(d, map[string]*scenarios.Scenario{"flight-sigterm": f}, run, nil)

	r := &runner.Result{Observation: obs("1")}
	judgeFlight(context.Background(), d, 1, f, runner.Reference, r)
	if !r.Compared || len(r.Failures()) != 1 {
		t.Fatalf("compared %v, failures %v, note %q", r.Compared, r.Failures(), r.OracleNote)
	}
	r = &runner.Result{Observation: obs("0")}
	judgeFlight(context.Background(), d, 0, f, runner.Reference, r)
	if r.Compared || !strings.Contains(r.OracleNote, "did not reach this step") {
		t.Fatalf("a flight the built-in did not fly: compared %v, note %q", r.Compared, r.OracleNote)
	}
	d.Path[0].FeatureGates = map[string]bool{"JobManagedBy": false}
	r = &runner.Result{Observation: obs("0")}
	judgeFlight(context.Background(), d, 0, f, runner.Reference, r)
	if r.Compared || !strings.Contains(r.OracleNote, "JobManagedBy gate is off") {
		t.Fatalf("gate off: compared %v, note %q", r.Compared, r.OracleNote)
	}
}
