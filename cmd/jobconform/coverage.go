package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/jobconform/jobconform/internal/coverage"
	"github.com/jobconform/jobconform/internal/k8sbin"
	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/internal/release"
)

// Coverage of upstream's Job controller (issue #69): what run --coverage
// and explore --coverage write at their end, the anchors measured the same
// way (upstream's own unit tests), and measurements compared side by side.

// coverageCmd is jobconform coverage: "unit" measures upstream's unit
// tests; "table" compares measurements of one release.
func coverageCmd(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usageError{errors.New("coverage: say what: unit (measure upstream's unit tests of pkg/controller/job) or table DIR... (compare measurements)")}
	}
	switch args[0] {
	case "unit":
		return coverageUnit(ctx, args[1:])
	case "table":
		return coverageTable(args[1:])
	case "report":
		return coverageReport(ctx, args[1:])
	}
	return usageError{fmt.Errorf("coverage %s: unknown; use unit, report or table", args[0])}
}

// coverageUnit runs upstream's unit tests of the Job controller with the
// same instrumentation as the covered controller-manager, in the covered
// build's module, and writes their report.
func coverageUnit(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("coverage unit", flag.ContinueOnError)
	version := fs.String("k8s-version", release.Default, "the Kubernetes release whose tests to run")
	out := fs.String("out", "", "directory of the report (default <artifacts>/coverage-unit/<release>)")
	pkgs := fs.String("packages", k8sbin.CoveredPackages, "upstream's test packages to run (k8s.io/kubernetes/test/integration/job needs etcd on PATH)")
	if err := parseFlags(fs, args); err != nil {
		return usageError{err}
	}
	v, err := release.Resolve(*version)
	if err != nil {
		return usageError{fmt.Errorf("--k8s-version: %w", err)}
	}
	if *out == "" {
		*out = filepath.Join(options.Artifacts(), "coverage-unit", v)
	}
	cb, err := releaseCoverBuild(ctx, v)
	if err != nil {
		return err
	}
	counters := filepath.Join(*out, "counters")
	if err := os.RemoveAll(counters); err != nil {
		return err
	}
	if err := os.MkdirAll(counters, 0o755); err != nil {
		return err
	}
	abs, err := filepath.Abs(counters)
	if err != nil {
		return err
	}
	start := time.Now()
	fmt.Fprintf(os.Stderr, "jobconform coverage: go test %s of Kubernetes %s, covered (minutes the first time: it compiles the tests)\n", *pkgs, v)
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-trimpath", "-cover", "-covermode=atomic", "-coverpkg="+k8sbin.CoveredPackages,
		*pkgs, "-args", "-test.gocoverdir="+abs)
	cmd.Dir = cb.Module
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	stop := heartbeat(30*time.Second, func(d time.Duration) {
		fmt.Fprintf(os.Stderr, "  go test of upstream's Job controller … %s elapsed\n", d.Round(time.Second))
	})
	err = cmd.Run()
	stop()
	if err != nil {
		// A failing upstream test still counted what it reached; say so.
		fmt.Fprintf(os.Stderr, "jobconform coverage: upstream's tests did not all pass (%v); what they reached is counted\n", err)
	}
	fmt.Fprintf(os.Stderr, "jobconform coverage: upstream's tests ran in %s\n", time.Since(start).Round(time.Second))
	r, err := summarizeCoverage(ctx, cb, []string{abs}, *out, "upstream's unit tests (go test "+*pkgs+")")
	if err != nil {
		return err
	}
	fmt.Printf("upstream's Job controller at %s, reached by %s: %s\n  %s\n", v, r.What, r.Line(), filepath.Join(*out, coverage.MarkdownFile))
	return nil
}

// coverageReport writes again the coverage reports of a run's artifacts
// directory from the counters it kept (after a run cut short, or to name
// what ran otherwise).
func coverageReport(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("coverage report", flag.ContinueOnError)
	what := fs.String("what", "", "what ran, for the report's heading (default: the directory)")
	if err := parseFlags(fs, args); err != nil {
		return usageError{err}
	}
	if fs.NArg() != 1 {
		return usageError{errors.New("coverage report: give the artifacts directory of a run with --coverage")}
	}
	_, err := writeRunCoverage(ctx, os.Stdout, fs.Arg(0), cmp.Or(*what, fs.Arg(0)))
	return err
}

// heartbeat calls beat every interval with the time elapsed, until stopped:
// a quiet child (go test compiling) still shows that it works.
func heartbeat(interval time.Duration, beat func(time.Duration)) (stop func()) {
	start, done := time.Now(), make(chan struct{})
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				beat(time.Since(start))
			case <-done:
				return
			}
		}
	}()
	return func() { close(done) }
}

// coverageTable prints measurements of one release side by side.
func coverageTable(args []string) error {
	if len(args) == 0 {
		return usageError{errors.New("coverage table: give the measurements to compare (directories with coverage.json), the anchor first")}
	}
	var rs []*coverage.Report
	for _, a := range args {
		r, err := coverage.Load(a)
		if err != nil {
			return usageError{err}
		}
		rs = append(rs, r)
	}
	if err := coverage.Table(os.Stdout, rs...); err != nil {
		return usageError{err}
	}
	for _, r := range rs[1:] {
		fmt.Printf("\n%s: %d blocks that %s reaches, not reached\n", r.What, len(coverage.Missed(rs[0], r)), rs[0].What)
	}
	return nil
}

// exploreCoverage writes explore --coverage's reports, when asked.
func exploreCoverage(ctx context.Context, o options.Options, seed uint64, cases int) error {
	if !o.Run.Coverage {
		return nil
	}
	_, err := writeRunCoverage(ctx, os.Stdout, o.Run.Artifacts, fmt.Sprintf("explore, seed %d, %d cases", seed, cases))
	return err
}

// releaseCoverBuild is release v's covered controller-manager and its module.
func releaseCoverBuild(ctx context.Context, v string) (*k8sbin.CoverBuild, error) {
	return (&k8sbin.Builder{Progress: os.Stderr}).EnsureCovered(ctx, v)
}

// summarizeCoverage merges counter directories into out/profile.txt and
// writes the report (JSON, Markdown, the source coloured in HTML).
func summarizeCoverage(ctx context.Context, cb *k8sbin.CoverBuild, counters []string, out, what string) (*coverage.Report, error) {
	profile := filepath.Join(out, coverage.ProfileFile)
	if err := coverage.Merge(ctx, profile, counters...); err != nil {
		return nil, err
	}
	src, err := coverage.ModuleDir(ctx, cb.Module)
	if err != nil {
		return nil, err
	}
	r, err := coverage.Summarize(profile, src, cb.Version, what)
	if err != nil {
		return nil, err
	}
	if err := coverage.Write(r, out); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(profile)
	if err != nil {
		return nil, err
	}
	htmlOut, err := filepath.Abs(filepath.Join(out, coverage.HTMLFile))
	if err != nil {
		return nil, err
	}
	return r, coverage.HTML(ctx, cb.Module, abs, htmlOut)
}

// writeRunCoverage sums the counters a run with --coverage left under art
// (art/coverage/<release>/counters, and its rounds' art/*/coverage/…),
// one report per release in art/coverage/<release>, and prints each.
func writeRunCoverage(ctx context.Context, w io.Writer, art, what string) ([]*coverage.Report, error) {
	byRelease := map[string][]string{}
	for _, pattern := range []string{"coverage/*/counters", "*/coverage/*/counters"} {
		dirs, _ := filepath.Glob(filepath.Join(art, pattern))
		for _, d := range dirs {
			v := filepath.Base(filepath.Dir(d))
			// report merge keeps each shard's in a directory of its own.
			shards, _ := filepath.Glob(filepath.Join(d, "shard-*"))
			byRelease[v] = append(append(byRelease[v], d), shards...)
		}
	}
	if len(byRelease) == 0 {
		return nil, fmt.Errorf("--coverage: no counters under %s: no local cluster ran the covered controller-manager", art)
	}
	var out []*coverage.Report
	for _, v := range slices.Sorted(maps.Keys(byRelease)) {
		cb, err := releaseCoverBuild(ctx, v)
		if err != nil {
			return out, err
		}
		dir := filepath.Join(art, "coverage", v)
		r, err := summarizeCoverage(ctx, cb, byRelease[v], dir, what)
		if err != nil {
			return out, fmt.Errorf("coverage of %s: %w", v, err)
		}
		fmt.Fprintf(w, "coverage of upstream's Job controller at %s: %s; %d blocks never reached: %s\n", v, r.Line(), len(r.Unreached), filepath.Join(dir, coverage.MarkdownFile))
		out = append(out, r)
	}
	return out, nil
}
