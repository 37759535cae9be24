package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jobconform/jobconform/reports"
	"github.com/jobconform/jobconform/suites/ginkgoreport"
	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"
)

// report writes the HTML report and the Markdown summary of finished runs;
// report diff compares two runs.
func report(args []string) error {
	if len(args) > 0 && args[0] == "diff" {
		return reportDiff(args[1:])
	}
	if len(args) > 0 && args[0] == "merge" {
		return reportMerge(args[1:])
	}
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	out := fs.String("out", "", "directory for report.html and summary.md (required)")
	title := fs.String("title", "jobconform", "the report's title")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() == 0 {
		return errors.New("report: give --out DIR and at least one Ginkgo JSON report (e.g. _artifacts/*/report.json)")
	}
	runs, err := ginkgoreport.Load(fs.Args()...)
	if err != nil {
		return err
	}
	path, err := reports.Write(*out, *title, runs)
	if err != nil {
		return err
	}
	fmt.Printf("report: %s (summary %s)\n", path, filepath.Join(*out, "summary.md"))
	return nil
}

// errRegressed: report diff found newly failing specs (exit status 1, as a
// CI gate wants).
var errRegressed = errors.New("newly failing specs (above)")

// reportDiff compares two runs of the suites — each an artifacts directory
// (every report-*.json under it) or Ginkgo JSON files, comma-separated —
// and fails when anything newly fails.
func reportDiff(args []string) error {
	fs := flag.NewFlagSet("report diff", flag.ContinueOnError)
	out := fs.String("out", "", "also write the comparison (Markdown) to this file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usageError{errors.New("report diff: give the baseline and the new run (OLD NEW), each an artifacts directory or comma-separated Ginkgo JSON reports")}
	}
	var sides [2][]reports.Run
	for i, arg := range fs.Args() {
		paths, err := reportFiles(arg)
		if err != nil {
			return usageError{fmt.Errorf("report diff: %w", err)}
		}
		if sides[i], err = ginkgoreport.Load(paths...); err != nil {
			return err
		}
	}
	d := reports.Compare(sides[0], sides[1])
	var b strings.Builder
	if err := reports.WriteDiff(&b, d); err != nil {
		return err
	}
	fmt.Print(b.String())
	if *out != "" {
		if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	if d.Regressed() {
		return errRegressed
	}
	return nil
}

// reportFiles are the Ginkgo JSON reports arg names: the files themselves,
// or every report-<suite>.json under a directory (a run's artifacts; the
// merged report.json and the oracle's kept observations are not read).
func reportFiles(arg string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(arg, ",") {
		info, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			out = append(out, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasPrefix(d.Name(), "report-") && strings.HasSuffix(d.Name(), ".json") {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("no report-*.json under %s: give a run's artifacts directory (e.g. _artifacts/run) or its Ginkgo JSON reports", p)
		}
		out = append(out, found...)
	}
	return out, nil
}

// reportMerge joins the artifacts of the shards of one run (--shard K/N)
// into one: per release directory, each suite's Ginkgo JSON and JUnit
// report with every shard's specs, the release's report.json, then one
// report.html and summary.md over them all; it prints the verdicts and
// fails as the run would have.
func reportMerge(args []string) error {
	fs := flag.NewFlagSet("report merge", flag.ContinueOnError)
	out := fs.String("out", "", "the merged artifacts directory (required; not one of the shards')")
	rerun := fs.String("rerun", "", "a --rerun-failed run's artifacts directory: its specs take the place of the same specs of the shards, each keeping the first verdict beside its own")
	if err := parseFlags(fs, args); err != nil {
		return usageError{err}
	}
	if *out == "" || fs.NArg() == 0 {
		return usageError{errors.New("report merge: give --out DIR and the artifacts directories of the shards (each a --shard K/N run's --artifacts)")}
	}
	// Each shard's report-<suite>.json, by its path below the shard's directory.
	parts := map[string][]string{}
	var rels []string
	for _, dir := range fs.Args() {
		if mustAbs(dir) == mustAbs(*out) {
			return usageError{fmt.Errorf("report merge: --out %s is one of the shards: write the merge elsewhere", *out)}
		}
		files, err := reportFiles(dir)
		if err != nil {
			return usageError{fmt.Errorf("report merge: %w", err)}
		}
		for _, f := range files {
			rel, err := filepath.Rel(dir, f)
			if err != nil || filepath.Base(filepath.Dir(rel)) == "oracle" {
				continue
			}
			if parts[rel] == nil {
				rels = append(rels, rel)
			}
			parts[rel] = append(parts[rel], f)
		}
	}
	slices.Sort(rels)
	byDir := map[string][]string{}
	var dirs []string
	for _, rel := range rels {
		var shards [][]types.Report
		for _, f := range parts[rel] {
			rs, err := ginkgoreport.ReadReports(f)
			if err != nil {
				return err
			}
			shards = append(shards, rs)
		}
		dst := filepath.Join(*out, rel)
		if err := writeMerged(shards, dst, *rerun, rel); err != nil {
			return err
		}
		if d := filepath.Dir(dst); byDir[d] == nil {
			dirs = append(dirs, d)
		}
		byDir[filepath.Dir(dst)] = append(byDir[filepath.Dir(dst)], dst)
		fmt.Printf("merged %s from %d shards\n", rel, len(parts[rel]))
	}
	res := &outcome{artifacts: *out, errs: errorsOf(mergeCoverage(*out, fs.Args()))}
	for _, d := range dirs {
		if err := res.add(d, byDir[d]); err != nil {
			return err
		}
	}
	return res.verdict()
}

// mergeCoverage joins the coverage counters the shards kept (run or
// explore with --coverage) under out, and writes the whole's reports: the
// counters of every shard of a release read together.
func mergeCoverage(out string, shards []string) error {
	found := false
	for i, dir := range shards {
		for _, pattern := range []string{"coverage/*/counters", "*/coverage/*/counters"} {
			ds, _ := filepath.Glob(filepath.Join(dir, pattern))
			for j, d := range ds {
				v := filepath.Base(filepath.Dir(d))
				dst := filepath.Join(out, "coverage", v, "counters", fmt.Sprintf("shard-%d-%d", i+1, j))
				if err := copyDir(d, dst); err != nil {
					return fmt.Errorf("report merge: coverage: %w", err)
				}
				found = true
			}
		}
	}
	if !found {
		return nil
	}
	_, err := writeRunCoverage(context.Background(), os.Stdout, out, fmt.Sprintf("%d shards merged", len(shards)))
	return err
}

// writeMerged merges the shards' reports of one suite and release (with
// the rerun's folded in, when given), and writes them as Ginkgo JSON at
// dst and JUnit beside it.
func writeMerged(shards [][]types.Report, dst, rerun, rel string) error {
	merged, err := ginkgoreport.Merge(shards)
	if err == nil && rerun != "" {
		merged, err = foldRerun(merged, filepath.Join(rerun, rel))
	}
	if err != nil {
		return fmt.Errorf("report merge: %s: %w", rel, err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	data, err := json.Marshal(merged)
	if err != nil {
		return err
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		return err
	}
	suite := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(rel), "report-"), ".json")
	for _, m := range merged {
		if err := reporters.GenerateJUnitReport(m, filepath.Join(filepath.Dir(dst), "junit-"+suite+".xml")); err != nil {
			return err
		}
	}
	return nil
}

// foldRerun folds the rerun's report at path, when there is one, into
// merged (ginkgoreport.Fold).
func foldRerun(merged []types.Report, path string) ([]types.Report, error) {
	if _, err := os.Stat(path); err != nil {
		return merged, nil // the rerun ran nothing of this suite at this release
	}
	rr, err := ginkgoreport.ReadReports(path)
	if err != nil {
		return nil, err
	}
	return ginkgoreport.Fold(merged, rr)
}

// errorsOf is err as a list: none when it is nil.
func errorsOf(err error) []error {
	if err == nil {
		return nil
	}
	return []error{err}
}

// copyDir copies the files of src (not its directories) into dst.
func copyDir(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func mustAbs(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return abs
}
