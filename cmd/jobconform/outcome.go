package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/reports"
	"github.com/jobconform/jobconform/suites/ginkgoreport"
)

// What the jobs left: each directory's reports merged, the runs loaded,
// and the verdict printed and written (report.html, summary.md, fidelity).

// outcome is what the jobs left: the reports, and what went wrong beyond
// the verdicts.
type outcome struct {
	artifacts string
	runs      []reports.Run
	reports   []string // the merged report.json of each directory
	errs      []error  // suites that ended badly beyond their specs
	fidelity  [2]string
	// requireOracle: a run the differential verdict did not judge fails
	// the whole (--require-oracle).
	requireOracle bool
	baseline      []reports.Run // --baseline's runs, read before any suite ran; nil without
}

// collect merges each directory's suite reports into its report.json (one
// per release, as tools read them), loads the runs, and notes the kwok and
// kubelet reports of a fidelity comparison.
func (res *outcome) collect(jobs []job) error {
	parts := map[string][]string{}
	var dirs []string
	for _, j := range jobs {
		if parts[j.dir] == nil {
			dirs = append(dirs, j.dir)
		}
		part := filepath.Join(j.dir, "report-"+j.suite+".json")
		if _, err := os.Stat(part); err == nil && !slices.Contains(parts[j.dir], part) {
			parts[j.dir] = append(parts[j.dir], part)
		}
		if j.o.Run.KubeletConformance && j.suite == "conformance" {
			i := 0
			if j.o.Nodes == options.NodesKubelet {
				i = 1
			}
			if res.fidelity[i] == "" {
				res.fidelity[i] = filepath.Join(j.dir, "report.json")
			}
		}
	}
	for _, dir := range dirs {
		if len(parts[dir]) == 0 {
			continue
		}
		if err := res.add(dir, parts[dir]); err != nil {
			return err
		}
	}
	return nil
}

// add merges a directory's suite reports (parts) into its report.json and
// loads its runs.
func (res *outcome) add(dir string, parts []string) error {
	report := filepath.Join(dir, "report.json")
	if err := mergeReports(report, parts); err != nil {
		return err
	}
	rs, err := ginkgoreport.Load(report)
	if err != nil {
		return err
	}
	for i := range rs {
		if rs[i].Version == "" { // a spec that failed before it ran a scenario
			rs[i].Version = orDefault(releaseOfDir(filepath.Base(dir)), "?")
		}
	}
	res.runs = append(res.runs, rs...)
	res.reports = append(res.reports, report)
	return nil
}

// verdict writes report.html, summary.md and (for a kubelet comparison) the
// fidelity table, prints the verdicts, and returns an error for any
// non-conformance or a run that judged nothing.
func (res *outcome) verdict() error {
	reports.Sort(res.runs)
	var diff *reports.Diff
	if res.baseline != nil {
		d := reports.Compare(res.baseline, res.runs)
		diff = &d
	}
	path, err := reports.WriteCompared(res.artifacts, "jobconform", res.runs, diff)
	if err != nil {
		return err
	}
	printVerdicts(os.Stdout, res.runs)
	ghAnnotateFailures(os.Stdout, res.runs)
	if t := reports.ScaleTable(res.runs); t != "" {
		fmt.Printf("\nscale: the controllers side by side (ratios to the built-in)\n\n%s\n", t)
	}
	if t := reports.MirrorTable(res.runs); t != "" {
		fmt.Printf("\ndispatchers: how late the worker's copy's status reached the manager's Job\n\n%s\n", t)
	}
	var errs []error
	if res.fidelity[0] != "" && res.fidelity[1] != "" {
		out := filepath.Join(res.artifacts, "fidelity.md")
		if err := fidelity([]string{"--kwok", res.fidelity[0], "--kubelet", res.fidelity[1], "--out", out}); err != nil {
			errs = append(errs, harnessError{fmt.Errorf("fidelity: %w", err)})
		}
	}
	if diff != nil {
		// report.html and summary.md have it too (WriteCompared).
		if err := reports.WriteDiff(os.Stdout, *diff); err != nil {
			errs = append(errs, err)
		}
	}
	var dirs []string
	for _, f := range res.reports {
		dirs = append(dirs, filepath.Dir(f))
	}
	fmt.Printf("\nreport: %s\nsummary: %s\nJUnit and Ginkgo JSON: %s\n", path, filepath.Join(res.artifacts, "summary.md"), strings.Join(dirs, " "))
	if err := ghStepSummary(filepath.Join(res.artifacts, "summary.md")); err != nil {
		errs = append(errs, harnessError{err})
	}
	broken, couldNot := splitFailed(res.runs)
	if broken > 0 {
		errs = append(errs, brokenError{fmt.Errorf("%d specs failed: the controllers under test broke promises (see the report)", broken)})
	}
	if couldNot > 0 {
		errs = append(errs, harnessError{fmt.Errorf("%d specs failed without a verdict on a controller: they could not run (their messages above say why)", couldNot)})
	}
	if err := unjudged(res.runs); err != nil {
		errs = append(errs, harnessError{err})
	}
	if n := reports.NotJudgedByOracle(res.runs); n > 0 && res.requireOracle {
		errs = append(errs, brokenError{fmt.Errorf("--require-oracle: %d runs were not compared with the built-in's for a reason it does not accept (the differential verdict above says why; docs/oracle.md lists the accepted ones)", n)})
	}
	for _, e := range res.errs {
		errs = append(errs, harnessError{e})
	}
	return errors.Join(errs...)
}

// splitFailed counts the failed specs that judged a controller (its own
// steps or invariants failed, or the differential verdict) and those
// that failed before any verdict (the framework's failure alone: a
// cluster that did not start, a harness error).
func splitFailed(runs []reports.Run) (broken, couldNot int) {
	for _, r := range runs {
		switch {
		case r.SpecVerdict != "FAIL":
		case r.Harness:
			couldNot++
		default:
			broken++
		}
	}
	return broken, couldNot
}

// readBaseline reads --baseline's runs before anything runs: a wrong path
// is the user's to fix at once, and the run's artifacts (art) must not be
// the baseline, whose reports the run replaces.
func readBaseline(baseline, art string) ([]reports.Run, error) {
	if baseline == "" {
		return nil, nil
	}
	if a, b := filepath.Clean(baseline), filepath.Clean(art); a == b || strings.HasPrefix(b+"/", a+"/") {
		return nil, usageError{fmt.Errorf("--baseline %s holds this run's artifacts (%s), which the run replaces: keep the earlier run elsewhere, or give --artifacts another directory", baseline, art)}
	}
	paths, err := reportFiles(baseline)
	if err != nil {
		return nil, usageError{fmt.Errorf("--baseline: %w", err)}
	}
	runs, err := ginkgoreport.Load(paths...)
	if err != nil {
		return nil, usageError{fmt.Errorf("--baseline: %w", err)}
	}
	return runs, nil
}
