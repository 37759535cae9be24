package drill

import (
	"context"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/scenarios/oracle"
	"github.com/jobconform/jobconform/suites/internal/harness"
	"github.com/jobconform/jobconform/suites/internal/runner"
)

// The differential verdict in the drills (issue #56): each flight of a
// drill flown by another controller is compared with the same flight of
// the same drill flown by the built-in — the same path, the same holds,
// the same pods deleted mid-trap at each change — on a cluster of its
// own. The built-in's drill flies twice where another controller is
// under test (its noise learned); its flights are kept under a key of the
// drill, the flight and the state it started in.

// theOracle is this process's differential verdict (nil: none).
var theOracle *harness.Oracle

// sharedOracle is what process 1 hands every process: the store and the
// settings.
type sharedOracle struct {
	Off           bool
	Dir, From     string
	Twice         bool
	OwnDir        bool // Dir is the suite's own, removed at the end
	BuiltInFlying bool // the built-in is under test: its flights will be kept
}

// restartsEvents is why a flight that lives through a change may differ
// in its events: each change restarts kube-controller-manager, the
// built-in's recorder with it (its queued events are lost, as a killed
// controller's are: StopLosesEvents), and kube-apiserver, whose absence a
// controller that keeps running meets and reports (FailedCreate,
// FailedDelete: seen 2 under the reference, 0 under the built-in, down
// meanwhile).
const restartsEvents = "the drill restarts kube-controller-manager (the built-in's queued events are lost with it) and kube-apiserver (a controller that keeps running meets its absence and records FailedCreate or FailedDelete; the built-in, down meanwhile, may not) while this flight runs; events are best-effort"

// restartsMessages is why a refused creation or deletion may read
// otherwise under each controller in a flight that lives through a change:
// the restarting kube-apiserver refuses it for whichever reason it is at
// (seen in rehearsal 14: the built-in's "TLS handshake timeout", the
// reference's "forbidden" while the authorizer had not yet loaded RBAC).
const restartsMessages = "the drill restarts kube-apiserver while this flight runs: a pod creation or deletion refused meanwhile says why the restarting apiserver refused it (a TLS handshake timeout, RBAC not yet loaded), which depends on when the controller asked"

// oracleSetUp is process 1's part: the store, and the built-in's flights
// claimed at once, so that another controller's flight waits for them
// rather than finding none.
func oracleSetUp(st options.Oracle, cs []runner.Controller, drills []*scenarios.Drill, flights map[string]*scenarios.Scenario) sharedOracle {
	GinkgoHelper()
	sh := sharedOracle{Off: st.Off, Dir: st.Dir, From: st.From}
	others := slices.ContainsFunc(cs, func(c runner.Controller) bool { return c.Name != runner.BuiltIn.Name })
	sh.BuiltInFlying = slices.ContainsFunc(cs, func(c runner.Controller) bool { return c.Name == runner.BuiltIn.Name })
	sh.Twice = others && !st.Off && st.From == ""
	if st.Off || st.From != "" {
		return sh
	}
	if sh.Dir == "" {
		dir, err := os.MkdirTemp("", "jobconform-drill-oracle-")
		Expect(err).NotTo(HaveOccurred())
		sh.Dir, sh.OwnDir = dir, true
	}
	if sh.BuiltInFlying {
		o := harness.Oracle{Store: oracle.Store{Dir: sh.Dir}}
		for _, d := range drills {
			for k := range d.Path {
				for _, name := range d.Flights {
					o.Started(keyed(d, k, flights[name]))
				}
			}
		}
	}
	return sh
}

// oracleOf is a process's differential verdict from process 1's settings.
func oracleOf(sh sharedOracle) *harness.Oracle {
	o := &harness.Oracle{Off: sh.Off, Twice: sh.Twice, Store: oracle.Store{Dir: sh.Dir}}
	if sh.From != "" {
		o.From = &oracle.Store{Dir: sh.From}
	}
	return o
}

var unsafeKey = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// keyed is flight f of drill d started at state k as the oracle knows it:
// named for all three (a file name), and allowed to miss events when it
// lives through a change.
func keyed(d *scenarios.Drill, k int, f *scenarios.Scenario) *scenarios.Scenario {
	s := *f
	s.Name = unsafeKey.ReplaceAllString(fmt.Sprintf("drill-%s-%s-s%d", d.Name, f.Name, k), "_")
	if k < len(d.Path)-1 {
		s.Oracle.MayLose = map[string]string{"events.": restartsEvents}
		s.Oracle.Differ = maps.Clone(f.Oracle.Differ) // the flight's own map is shared
		if s.Oracle.Differ == nil {
			s.Oracle.Differ = map[string]string{}
		}
		for _, field := range []string{"messages.event Warning/FailedCreate", "messages.event Warning/FailedDelete"} {
			s.Oracle.Differ[field] = restartsMessages
		}
		if slices.Contains(d.TerminateAtSwap, f.Name) {
			for _, field := range []string{"status.failed", "pods.created", "pods.index", "pods.shape", "events."} {
				s.Oracle.Differ[field] = deletedAtChanges
			}
		}
	}
	return &s
}

// deletedAtChanges is why a flight whose pods the drill deletes at each
// change may end with other counts than the built-in's: how many changes
// it is still running for depends on each drill's pace (kube-controller-
// manager, the built-in with it, is down while it changes; another
// controller is not). Seen on 2026-11-29: flight-sigterm from step 0,
// failed 3 and 5 pods under the built-in (both its runs), 2 and 4 under the
// reference.
const deletedAtChanges = "the drill deletes one of this flight's running pods at each change it is still running for, and how many that is depends on each drill's pace (the built-in is down while kube-controller-manager changes, another controller is not)"

// flyJudged flies drill d against c; the built-in's drill flies again
// where its noise is wanted (on a cluster of its own), and its flights are
// kept as the oracle.
func flyJudged(ctx context.Context, d *scenarios.Drill, flights map[string]*scenarios.Scenario, c runner.Controller) (run, again *drillRun) {
	GinkgoHelper()
	if c.Name != runner.BuiltIn.Name {
		return fly(ctx, "drill", d, flights, c), nil
	}
	// Kept below; a drill that ends before says so at once.
	defer abandonFlights(d, flights, "the built-in's drill ended before its flights were kept")
	run = fly(ctx, "drill", d, flights, c)
	if theOracle.RunsOfBuiltIn() > 1 {
		again = fly(ctx, "drill-again", d, flights, c)
	}
	keepFlights(d, flights, run, again)
	return run, again
}

// keepFlights keeps the built-in's flights of d (run, and again when it
// flew twice) as the oracle, each flight's runs together; a flight that did
// not fly says so, so that no other controller's flight waits for it.
func keepFlights(d *scenarios.Drill, flights map[string]*scenarios.Scenario, run, again *drillRun) {
	GinkgoHelper()
	for k := range d.Path {
		for _, name := range d.Flights {
			s := keyed(d, k, flights[name])
			f := run.flight(k, name)
			if f == nil {
				theOracle.Abandon(s, "the built-in's drill did not reach this step")
				continue
			}
			runs := []*runner.Result{f.result}
			if again != nil {
				if g := again.flight(k, name); g != nil && g.result.Skipped == "" && g.result.Err == nil {
					runs = append(runs, g.result)
				}
			}
			Expect(theOracle.Keep(s, runs...)).To(Succeed(), "keeping the built-in's flight %s as the oracle", s.Name)
		}
	}
}

// abandonFlights says, for a built-in drill that ended before keeping
// its flights, that none will be kept.
func abandonFlights(d *scenarios.Drill, flights map[string]*scenarios.Scenario, why string) {
	for k := range d.Path {
		for _, name := range d.Flights {
			theOracle.Abandon(keyed(d, k, flights[name]), why)
		}
	}
}

// judgeFlight compares another controller's flight r (flight name started
// at state k of d) with the built-in's.
func judgeFlight(ctx context.Context, d *scenarios.Drill, k int, f *scenarios.Scenario, c runner.Controller, r *runner.Result) {
	if step, off := managedByOff(d, k); off && c.ManagedBy != nil {
		r.OracleNote = "not compared with the built-in: in " + step + " the built-in's JobManagedBy gate is off and it acts on this controller's Job too"
		return
	}
	theOracle.Judge(ctx, keyed(d, k, f), c, r)
}
