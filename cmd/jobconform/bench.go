package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/reports"
)

// bench is make bench: the local provider's start-to-ready (go test's
// benchmark, median of 7), the invariants' judging cost at 100 to 10,000
// pods, then the conformance and chaos suites against
// the controllers under test, each --runs times, with the median wall time;
// then the scale suite once, with its side-by-side table.
func bench(ctx context.Context, args []string) error {
	if err := checkout(); err != nil {
		return usageError{err}
	}
	o, err := options.FromEnv()
	if err != nil {
		return usageError{err}
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	addFlags(fs, &o)
	runs := fs.Int("runs", 3, "times each suite runs (the median is printed)")
	scaleFigures := fs.Bool("scale-figures", true, "then run the scale suite once (its --scale form, default 1k: about 15 minutes) and print its side-by-side figures")
	if err := parseFlags(fs, args); err != nil {
		return usageError{err}
	}
	if *runs < 1 {
		return usageError{fmt.Errorf("--runs %d: give at least 1", *runs)}
	}
	base := o.Run.Artifacts
	var plans []*plan
	for _, suite := range []string{"conformance", "chaos"} {
		so := o
		so.Run.Suites = []string{suite}
		p, err := check(ctx, so)
		if err != nil {
			return usageError{err}
		}
		plans = append(plans, p)
	}
	if err := buildReleases(ctx, plans[0].o.Run.Versions, nil, false); err != nil {
		return err
	}
	if err := goBenchmarks(ctx, plans[0].o.Run.Versions[0]); err != nil {
		return err
	}
	var failed error
	for _, p := range plans {
		if err := timeSuite(ctx, p, base, *runs); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			failed = err
		}
	}
	if *scaleFigures {
		if err := scaleFiguresRun(ctx, o, base); err != nil {
			failed = err
		}
	}
	return failed
}

// goBenchmarks runs the Go benchmarks of the harness: a local cluster's
// start to ready at version, and the harness's own cost at scale (every
// invariant over a synthetic recording of 100, 1,000 and 10,000 pods:
// issue #32's 10 s target).
func goBenchmarks(ctx context.Context, version string) error {
	cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", "StartToReady", "-benchtime", "7x", "-count=1", "./internal/cluster/internal/local/")
	cmd.Env = append(os.Environ(), "JOBCONFORM_K8S_VERSION="+version)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("start-to-ready benchmark: %w", err)
	}
	cmd = exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", "CheckAll", "-benchtime", "3x", "-benchmem", "-count=1", "./scenarios/invariants/")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("judging benchmark: %w", err)
	}
	return nil
}

// timeSuite runs p's one suite runs times and prints each wall time and
// the median; the error is the last run's that failed.
func timeSuite(ctx context.Context, p *plan, base string, runs int) error {
	suite := p.o.Run.Suites[0]
	var secs []float64
	var failed error
	for i := 1; i <= runs; i++ {
		p.o.Run.Artifacts = filepath.Join(base, "bench", fmt.Sprintf("%s-%d", suite, i))
		_ = os.RemoveAll(p.o.Run.Artifacts)
		p.jobs = planJobs(p.o, p.specs)
		start := time.Now()
		res, err := p.runJobs(ctx)
		t := time.Since(start).Seconds()
		if err == nil {
			err = res.verdict()
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		status := "all passed"
		if err != nil {
			status, failed = "FAILED: "+err.Error(), err
		}
		secs = append(secs, t)
		fmt.Printf("  %s run %d: %.0fs wall (%s); reports in %s\n", suite, i, t, status, p.o.Run.Artifacts)
	}
	sort.Float64s(secs)
	fmt.Printf("%s suite, %v, Kubernetes %s, %d processes: median %.0fs wall of %d runs (set-up included)\n",
		suite, p.o.ControllerNames(), p.o.Run.Versions[0], p.jobs[0].procs(), secs[len(secs)/2], runs)
	return failed
}

// scaleFiguresRun runs the scale suite once and prints its side-by-side
// figures.
func scaleFiguresRun(ctx context.Context, o options.Options, base string) error {
	so := o
	so.Run.Suites = []string{"scale"}
	so.Run.Artifacts = filepath.Join(base, "bench", "scale")
	_ = os.RemoveAll(so.Run.Artifacts)
	p, err := check(ctx, so)
	if err != nil {
		return usageError{err}
	}
	start := time.Now()
	res, err := p.runJobs(ctx)
	if err != nil {
		return err
	}
	failed := res.verdict()
	fmt.Printf("scale suite (%s form), %v, Kubernetes %s: %.0fs wall (set-up included); reports in %s\n\n%s",
		p.o.ScaleForm(), p.o.ControllerNames(), p.o.Run.Versions[0], time.Since(start).Seconds(), so.Run.Artifacts, reports.ScaleTable(res.runs))
	return failed
}
