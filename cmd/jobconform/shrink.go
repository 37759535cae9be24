package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/reports"
	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/scenarios/explore"
)

// Shrinking a failing explore case (explore.md, after delta debugging): a
// round runs every one-cut candidate of the case (explore.Shrink) side by
// side as one conformance suite run, the built-in twice as their oracle,
// and keeps the smallest that the same controller still fails alike
// (explore.Signature of the case's first failure); rounds go on until no
// candidate fails alike or the budget is spent.

// shrunk is one failing case cut down.
type shrunk struct {
	Case, Controller, Failure string
	Scenario                  *scenarios.Scenario
	Rounds, Cuts              int
	// Stopped says why shrinking ended ("no smaller case fails alike",
	// or the budget).
	Stopped string
	File    string
	// Alike names the controller under test where it failed the case as
	// the built-in did (failedAlike).
	Alike string
}

// shrinkCase shrinks s, which controller failed with failure, in rounds
// under dir, until deadline. o are explore's settings (its controllers,
// release and nodes).
func shrinkCase(ctx context.Context, o options.Options, dir string, s *scenarios.Scenario, controller, failure string, deadline time.Time) shrunk {
	o = shrinkOptions(o)
	want := explore.Signature(failure)
	out := shrunk{Case: s.Name, Controller: controller, Failure: failure, Scenario: s, Stopped: "no smaller case fails alike"}
	cur := s
	for round := 1; ; round++ {
		if ctx.Err() != nil {
			out.Stopped = "interrupted"
			return out
		}
		if time.Now().After(deadline) {
			out.Stopped = "the shrinking budget (--shrink-budget) ran out"
			return out
		}
		cands := explore.Shrink(cur)
		if len(cands) == 0 {
			return out
		}
		roundDir := filepath.Join(dir, s.Name, fmt.Sprintf("round-%d", round))
		fmt.Fprintf(os.Stderr, "jobconform explore: shrinking %s (%s fails it: %s), round %d: %d candidates\n", s.Name, controller, want, round, len(cands))
		runs, err := runCandidates(ctx, o, roundDir, cands)
		out.Rounds = round
		if err != nil {
			out.Stopped = "round " + fmt.Sprint(round) + " did not run: " + err.Error()
			return out
		}
		next, failure := firstAlike(cands, runs, controller, want)
		if next == nil {
			return out
		}
		out.Cuts, out.Failure = out.Cuts+1, failure
		next.Name = s.Name
		cur, out.Scenario = next, next
	}
}

// shrinkOptions are explore's settings o for a shrinking round: never
// --fail-fast, whose first failing candidate would interrupt the others
// (an interrupted run is no failure alike), so that a round would keep no
// cut however many candidates failed alike — seen shrinking a real
// failure (explore --fail-fast, 2026-11-29).
func shrinkOptions(o options.Options) options.Options {
	o.Run.FailFast = false
	return o
}

// firstAlike is the first (smallest) candidate that controller failed with
// a failure of signature want;
// failure is that candidate's own failure of the signature (its values are
// the cut case's, not the original's).
func firstAlike(cands []*scenarios.Scenario, runs []reports.Run, controller, want string) (c *scenarios.Scenario, failure string) {
	for _, c := range cands {
		i := slices.IndexFunc(runs, func(r reports.Run) bool {
			return r.Scenario == c.Name && r.Controller == controller && r.Verdict == "FAIL"
		})
		if i < 0 {
			continue
		}
		if j := slices.IndexFunc(runs[i].Failures, func(f string) bool { return explore.Signature(f) == want }); j >= 0 {
			return c, runs[i].Failures[j]
		}
	}
	return nil, ""
}

// runCandidates runs cands as the conformance suite's only scenarios,
// reports under dir, and returns the runs.
func runCandidates(ctx context.Context, o options.Options, dir string, cands []*scenarios.Scenario) ([]reports.Run, error) {
	cases := filepath.Join(dir, "cases")
	_ = os.RemoveAll(dir) // an earlier explore's round of this case: its own candidates again
	if err := os.MkdirAll(cases, 0o755); err != nil {
		return nil, err
	}
	for _, c := range cands {
		data, err := explore.Render(c)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(cases, c.Name+".yaml"), data, 0o644); err != nil {
			return nil, err
		}
	}
	o.ScenarioDirs, o.Run.Artifacts = []string{cases}, dir
	// The candidates are new scenarios: no earlier run kept the built-in's
	// runs of them (--oracle-from), so it runs them here, twice.
	o.Oracle.From, o.Oracle.Twice = "", !o.Oracle.Off
	p, err := check(ctx, o)
	if err != nil {
		return nil, err
	}
	res, err := p.buildAndRun(ctx)
	if err != nil {
		return nil, err
	}
	// A suite with failing specs ends with an error among res.errs: that
	// is what a round looks for. A round in which nothing ran is not.
	if len(res.runs) == 0 {
		why := errors.Join(res.errs...)
		if why == nil {
			why = errors.New("the suite left no report")
		}
		return nil, fmt.Errorf("no candidate ran: %w", why)
	}
	return res.runs, nil
}

// writeShrunk writes sh's case into dir as a scenario file headed by where
// it came from and what it shows.
func writeShrunk(dir string, seed uint64, sh *shrunk) error {
	s := *sh.Scenario
	s.Name = sh.Case + "-shrunk"
	s.Description = fmt.Sprintf("Case %s of jobconform explore's seed %d, shrunk by %d cuts in %d rounds (%s): %s fails it with: %s",
		sh.Case, seed, sh.Cuts, sh.Rounds, sh.Stopped, sh.Controller, sh.Failure)
	data, err := explore.Render(&s)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	sh.File = filepath.Join(dir, s.Name+".yaml")
	head := fmt.Sprintf("# jobconform explore --seed %d: case %s shrunk (%s).\n# Run it: jobconform run --builtin-scenarios=false --suites conformance --oracle-twice --scenarios %s\n",
		seed, sh.Case, strings.TrimSuffix(sh.Stopped, "."), dir)
	return os.WriteFile(sh.File, append([]byte(head), data...), 0o644)
}
