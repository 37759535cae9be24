package harness

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/scenarios/bugs"
	"github.com/jobconform/jobconform/scenarios/oracle"
	"github.com/jobconform/jobconform/suites/internal/runner"
)

// Oracle is the differential verdict in a suite process: the built-in's
// run of each scenario is kept (Keep) and every other controller's run of
// it is compared with that one (Judge).
type Oracle struct {
	// Off: nothing is compared.
	Off bool
	// Store holds this run's built-in observations, shared by the suite's
	// processes; From, when set, an earlier run's, read instead.
	Store oracle.Store
	From  *oracle.Store
	// RunBuiltIn runs a scenario against the built-in controller, for a
	// scenario whose built-in run is not part of this suite run.
	RunBuiltIn func(ctx context.Context, s *scenarios.Scenario) *runner.Result
	// BuiltInTimeout bounds how long a claimed built-in run may take before
	// a run waiting for it gives up (default 6 minutes for each of its runs
	// and one run again).
	BuiltInTimeout time.Duration
	// Twice runs the built-in twice per scenario (--oracle-twice, and
	// explore): what its two runs differ in is that scenario's noise, not
	// compared; runs that end apart make the scenario racy, not judged.
	Twice bool
}

// RunsOfBuiltIn is how many times the built-in runs each scenario.
func (o *Oracle) RunsOfBuiltIn() int {
	if o != nil && o.Twice && !o.Off && o.From == nil {
		return 2
	}
	return 1
}

// Started marks the built-in's run of s as under way: another controller's
// run of s waits for it instead of running its own.
func (o *Oracle) Started(s *scenarios.Scenario) {
	if o == nil || o.Off || o.From != nil {
		return
	}
	_, _ = o.Store.Claim(s.Name)
}

// Keep stores the built-in's runs rs of s (RunsOfBuiltIn of them) as the
// oracle of s, their noise learned where there are two.
func (o *Oracle) Keep(s *scenarios.Scenario, rs ...*runner.Result) error {
	if o == nil || o.Off || o.From != nil {
		return nil
	}
	var obs *oracle.Observation
	for _, r := range rs {
		if r.Skipped != "" || r.Observation == nil { // said, so that no run waits for it
			return o.Store.Put(s.Name, &oracle.Observation{Controller: r.Controller, Version: r.Version, Skipped: cmp.Or(r.Skipped, "nothing observed")})
		}
		this := asOracle(r)
		if obs == nil {
			obs = this
		} else {
			obs = oracle.Learn(obs, this)
		}
	}
	return o.Store.Put(s.Name, obs)
}

// asOracle is the built-in's run r as an oracle: its observation, with
// what it broke and the known bugs that explain it.
func asOracle(r *runner.Result) *oracle.Observation {
	o := *r.Observation
	o.Failed, o.Bugs = r.Failures(), r.KnownBugs()
	for _, st := range r.Steps {
		if !st.OK && !st.Skipped { // the steps stop at the first that fails
			o.Cut = fmt.Sprintf("it stopped at step %d (%s), the steps after it never ran", st.Index, st.What)
		}
	}
	return &o
}

// Abandon says, when the built-in's run of s was marked started and
// nothing was kept, that nothing will be: a run waiting for it stops
// waiting, not judged, with why.
func (o *Oracle) Abandon(s *scenarios.Scenario, why string) {
	if o == nil || o.Off || o.From != nil {
		return
	}
	if _, ok, err := o.Store.Get(s.Name); err == nil && !ok {
		_ = o.Store.Put(s.Name, &oracle.Observation{Controller: runner.BuiltIn.Name, Skipped: why})
	}
}

// Spec is a spec's part of the differential verdict, the same in every
// suite: c's run of s (run); for the built-in, its run kept as the oracle,
// run again (again) where RunsOfBuiltIn is 2 and kept with it for the noise;
// for any other controller, its run judged against the built-in's. second
// is the built-in's run again (nil when there was none), for the spec to
// judge too.
func (o *Oracle) Spec(ctx context.Context, s *scenarios.Scenario, c runner.Controller, run, again func() *runner.Result) (r, second *runner.Result, err error) {
	if c.Name != runner.BuiltIn.Name {
		r = run()
		o.Judge(ctx, s, c, r)
		return o.confirm(ctx, s, c, r, run), nil, nil
	}
	o.Started(s)
	// A spec that ends before its run is kept (skipped, failed, a harness
	// error) says so, so that no other controller's run waits for it.
	defer o.Abandon(s, "the built-in's spec ended before its run was kept")
	r = againIfStarved(run(), run)
	runs := []*runner.Result{r}
	if o.RunsOfBuiltIn() > 1 && r.Skipped == "" && r.Err == nil {
		second = againIfStarved(again(), again)
		runs = append(runs, second)
	}
	return r, second, o.Keep(s, runs...)
}

// againIfStarved is r, or, when r failed only in ways a busy machine can
// cause (runner.Result.ByMachine) while the starvation meter read the
// machine starved, the verdict of a run again, which says so (Again): CI
// of 2026-12-02, at 23 % steal and GETs of 3 s, saw the built-in replace
// a pod of a 600-pod Job 23 s after a failure (bound 17.5 s). A controller
// late by its own fault is late again.
func againIfStarved(r *runner.Result, run func() *runner.Result) *runner.Result {
	why := r.Starvation.Why()
	if why == "" || !r.ByMachine() {
		return r
	}
	ginkgo.GinkgoWriter.Printf("jobconform: %s's run of %s failed on a starved machine (%s): run again\n", r.Controller, r.Scenario, why)
	again := run()
	again.Again = fmt.Sprintf("run again: the first run failed while the machine was starved (%s): %s", why, strings.Join(r.Failures(), "; "))
	return again
}

// confirm is c's run r of s, or, when r failed in ways a busy machine can
// cause, the verdict of a run again: on a starved machine (againIfStarved),
// compared with the built-in like the first; or by differences alone. A
// difference the built-in's two runs did not show may still be the
// scenario's own race: under load (eight spinning processes),
// explore-1-13's 18 copies saw the built-in's pairs of runs agree on every
// copy, but end with 0, 1 or 2 pods deleted from copy to copy. So the
// built-in runs once more, its noise learned from all three runs, c runs
// again, and both of c's runs are compared with the three: a difference in
// either run that none of the built-in's showed fails c (issue #70: a
// fault that shows in one run of two is a fault; flakiness is the
// built-in's to prove).
func (o *Oracle) confirm(ctx context.Context, s *scenarios.Scenario, c runner.Controller, r *runner.Result, run func() *runner.Result) *runner.Result {
	if !r.OnlyDiffers() {
		again := againIfStarved(r, run)
		if again != r {
			o.Judge(ctx, s, c, again)
		}
		return again
	}
	ginkgo.GinkgoWriter.Printf("jobconform: %s's run of %s differs from the built-in's (%s): the built-in once more, and this controller again\n", c.Name, s.Name, oracle.Failing(r.Differences)[0])
	builtin, why, err := o.builtin(ctx, s)
	if err == nil && builtin != nil && o.From == nil && o.RunBuiltIn != nil {
		if br := o.RunBuiltIn(ctx, s); br.Err == nil && br.Skipped == "" && br.Observation != nil {
			builtin = oracle.Learn(builtin, asOracle(br))
		}
	}
	again := run()
	o.judgeWith(s, again, builtin, why, err)
	firstFailing := oracle.Failing(r.Differences)
	o.judgeWith(s, r, builtin, why, err)
	secondOnly := firstRunOnly(again, r, builtin) // the same rule, the runs' roles swapped
	again.Differences = append(firstRunOnly(r, again, builtin), again.Differences...)
	for i, d := range again.Differences {
		for _, x := range secondOnly {
			if d.Field == x.Field && d.Allowed == "" && x.Allowed != "" {
				again.Differences[i].Allowed = x.Allowed
			}
		}
	}
	runs := 0
	if builtin != nil {
		runs = max(builtin.Runs, 1)
	}
	again.Again = fmt.Sprintf("run again: the first run differed from the built-in's (%s); both runs compared again with the built-in's %d runs", describeDiffs(firstFailing), runs)
	return again
}

// firstRunOnly are the differences of a controller's first run that no
// allowance excuses and its second run did not show, marked as the first
// run's: they fail the verdict of the second — but for which pods the
// Job's end deleted (oracle.OneRunDeletes), a race of the scenario when
// one run of two shows it: said and excused.
func firstRunOnly(first, again *runner.Result, builtin *oracle.Observation) []oracle.Difference {
	var out []oracle.Difference
	for _, d := range oracle.Failing(first.Differences) {
		if slices.ContainsFunc(again.Differences, func(a oracle.Difference) bool { return a.Field == d.Field && a.Allowed == "" }) {
			continue
		}
		d.Other += " (in this controller's first run of two)"
		if builtin != nil {
			d.Allowed = oracle.OneRunDeletes(builtin, first.Observation, d.Field)
		}
		out = append(out, d)
	}
	return out
}

func describeDiffs(ds []oracle.Difference) string {
	var out []string
	for _, d := range ds {
		out = append(out, "differential "+d.String())
	}
	return strings.Join(out, "; ")
}

// rerunUnexplained is the built-in's run br of s made for the oracle, or,
// when br failed for a reason no known upstream bug explains (a starved
// await, a flake of the machine), its run again if that one did not: the
// built-in is not under test here, and one bad run must not leave the
// other controller unjudged. A run again that fails too is the oracle's
// answer (not judged: it broke a promise).
func (o *Oracle) rerunUnexplained(ctx context.Context, s *scenarios.Scenario, br *runner.Result) *runner.Result {
	if br.Err != nil || !br.Unexplained() {
		return br
	}
	ginkgo.GinkgoWriter.Printf("jobconform: the built-in's run of %s for the oracle failed (%s): run again\n", s.Name, strings.Join(br.Failures(), "; "))
	if again := o.RunBuiltIn(ctx, s); again.Err == nil && !again.Unexplained() {
		return again
	}
	return br
}

// Judge compares r, controller c's run of s, with the built-in's run of s:
// the differences go into r.Differences (those the scenario does not allow
// fail the run), or r.OracleNote says why nothing was compared.
func (o *Oracle) Judge(ctx context.Context, s *scenarios.Scenario, c runner.Controller, r *runner.Result) {
	switch {
	case o == nil || r.Skipped != "" || c.Name == runner.BuiltIn.Name:
		return
	case o.Off:
		r.OracleNote = "not compared with the built-in: the differential verdict is off (--no-oracle)"
		return
	case r.Observation == nil:
		r.OracleNote = "not compared with the built-in: nothing was observed"
		return
	case !s.ForController(runner.BuiltIn.Name):
		r.OracleNote = "not compared with the built-in: the scenario is not for the built-in controller"
		return
	}
	builtin, why, err := o.builtin(ctx, s)
	o.judgeWith(s, r, builtin, why, err)
}

// judgeWith is Judge with the built-in's observation of s at hand (nil:
// why there is none, or err).
func (o *Oracle) judgeWith(s *scenarios.Scenario, r *runner.Result, builtin *oracle.Observation, why string, err error) {
	switch {
	case err != nil:
		r.OracleNote = "not compared with the built-in: " + err.Error()
	case builtin == nil:
		r.OracleNote = "not compared with the built-in: " + why
	case builtin.Skipped != "":
		r.OracleNote = "not compared with the built-in: its run was skipped: " + builtin.Skipped
	case builtin.Format != r.Observation.Format:
		// A kept run (--oracle-from) of another jobconform.
		r.OracleNote = fmt.Sprintf("not compared with the built-in: its run was kept by a jobconform that observes otherwise (format %d, this one %d): run the built-in again, not --oracle-from", builtin.Format, r.Observation.Format)
	case builtin.Version != r.Observation.Version || builtin.Nodes != r.Observation.Nodes:
		// A kept run (--oracle-from) of another release or other nodes.
		r.OracleNote = fmt.Sprintf("not compared with the built-in: its run is of Kubernetes %s on %s nodes, this one of %s on %s nodes",
			builtin.Version, cmp.Or(builtin.Nodes, "kwok"), r.Observation.Version, cmp.Or(r.Observation.Nodes, "kwok"))
	case builtin.Gates != r.Observation.Gates:
		r.OracleNote = fmt.Sprintf("not compared with the built-in: its run is of a cluster with feature gates %q, this one %q", builtin.Gates, r.Observation.Gates)
	case builtin.Scenario != r.Observation.Scenario:
		// A kept run of another version of the scenario (or one kept by a
		// jobconform that wrote no fingerprint).
		r.OracleNote = fmt.Sprintf("not compared with the built-in: its run is of another version of this scenario (fingerprint %s, this one %s): run the built-in again, not --oracle-from", cmp.Or(builtin.Scenario, "none"), r.Observation.Scenario)
	case builtin.Racy != "":
		// explore.md: a case whose outcome hinges on a race is never judged.
		r.OracleNote = "not compared with the built-in: racy: " + builtin.Racy
	case len(builtin.Failed) > 0:
		// A built-in that broke a promise is judged (and its bug named) in
		// its own spec. It is still the oracle where known bugs whose
		// fields are known explain every failure: for every other field.
		byBug, ok, why := bugFields(builtin)
		if !ok {
			r.OracleNote = fmt.Sprintf("not compared with the built-in: its run of this scenario broke a promise (%s)%s", builtin.Failed[0], why)
			return
		}
		r.Compared, r.Untimed = true, oracle.WhyUntimed(builtin, r.Observation)
		r.Differences = oracle.CompareWith(builtin, r.Observation, s.Allowed(), mayLose(s))
		// After the comparison: a bug may decide whether an event is
		// recorded at all, which no allowance of a scenario may excuse.
		for i, d := range r.Differences {
			for f, reason := range byBug {
				if d.Allowed == "" && oracle.Matches(f, d.Field) {
					r.Differences[i].Allowed = reason
				}
			}
		}
	default:
		r.Compared, r.Untimed = true, oracle.WhyUntimed(builtin, r.Observation)
		r.Differences = oracle.CompareWith(builtin, r.Observation, s.Allowed(), mayLose(s))
	}
}

// bugFields are the fields the known bugs that broke the built-in's run
// change (bugs.Bug.Fields), each excused by its bug; not ok when that run
// is no oracle at all: a failure no known bug explains, a step the bug
// broke (the run stopped there: Cut), or a bug whose fields were never
// learned (why, when there is more to say).
func bugFields(builtin *oracle.Observation) (allowed map[string]string, ok bool, why string) {
	if len(builtin.Bugs) == 0 {
		return nil, false, ""
	}
	if builtin.Cut != "" {
		return nil, false, "; " + builtin.Cut + ", so what it left is of a shorter run"
	}
	allowed = map[string]string{}
	for _, id := range builtin.Bugs {
		b, known := bugs.All[id]
		if !known || len(b.Fields) == 0 {
			return nil, false, fmt.Sprintf("; which fields %s changes in a run was never learned", id)
		}
		for _, f := range b.Fields {
			allowed[f] = fmt.Sprintf("changed in the built-in's run by known upstream bug %s of Kubernetes %s", id, builtin.Version)
		}
	}
	return allowed, true, ""
}

// StopLosesEvents is why a scenario that stops the controller may miss
// any of its events: a controller's event recorder sends them after the
// fact, one at a time; a SIGKILL takes the queue with it, and a graceful
// stop shuts the broadcaster down, cancelling the sends in flight (the
// built-in records before its status write, the reference after: which one
// is lost depends on the instant of the stop). Seen in CI on 2026-11-29:
// controller-crash-during-failure-target's SuccessfulDelete, built-in 1,
// reference 0; and in a rehearsal on 2026-12-01 after a graceful restart
// right after the pod's creation: SuccessfulCreate, built-in 1, reference 0.
const StopLosesEvents = "the scenario stops the controller (a restart, a stop, a crash, a feature-gate flip): events it had queued but not sent may be lost with it; events are best-effort"

// mayLose is the scenario's own mayLose, and every event when the scenario
// stops the controller.
func mayLose(s *scenarios.Scenario) map[string]string {
	stopped := false
	for _, a := range s.ChaosActions() {
		stopped = stopped || a.StopsController()
	}
	if !stopped {
		return s.Oracle.MayLose
	}
	out := maps.Clone(s.Oracle.MayLose)
	if out == nil {
		out = map[string]string{}
	}
	out["events."] = StopLosesEvents
	return out
}

// builtin finds the built-in's observation of s: kept from an earlier run,
// made by this run's built-in spec (waiting for it when it has started), or
// else made here.
func (o *Oracle) builtin(ctx context.Context, s *scenarios.Scenario) (*oracle.Observation, string, error) {
	if o.From != nil {
		obs, ok, err := o.From.Get(s.Name)
		if err == nil && !ok {
			return nil, "no kept run of this scenario in " + o.From.Dir, nil
		}
		return obs, "", err
	}
	limit := o.BuiltInTimeout
	if limit == 0 {
		limit = time.Duration(o.RunsOfBuiltIn()+1) * 6 * time.Minute // +1: a run again on a starved machine
	}
	for {
		obs, ok, err := o.Store.Get(s.Name)
		if err != nil || ok {
			return obs, "", err
		}
		claimed, err := o.Store.Claim(s.Name)
		if err != nil {
			return nil, "", err
		}
		if claimed { // no built-in run of s in this suite run: make one
			if o.RunBuiltIn == nil {
				return nil, "the built-in does not run here", nil
			}
			var brs []*runner.Result
			for range o.RunsOfBuiltIn() {
				br := o.rerunUnexplained(ctx, s, o.RunBuiltIn(ctx, s))
				if br.Err != nil {
					o.Abandon(s, "the built-in's run ended in a harness error: "+br.Err.Error())
					return nil, "", fmt.Errorf("the built-in's run: %w", br.Err)
				}
				brs = append(brs, br)
			}
			if err := o.Keep(s, brs...); err != nil {
				return nil, "", err
			}
			continue
		}
		if at, ok := o.Store.ClaimedAt(s.Name); ok && time.Since(at) > limit {
			since := time.Since(at)
			return nil, fmt.Sprintf("the built-in's run of this scenario, started %s ago, left nothing (its spec failed before the end, or was skipped)", since.Round(time.Second)), nil
		}
		select {
		case <-ctx.Done():
			return nil, "", ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
