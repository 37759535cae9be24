package main

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/jobconform/jobconform/reports"
)

// unjudged reports a controller under test of which every run skipped (e.g.
// a delegated controller on a cluster that drops spec.managedBy): a run that
// judged nothing must not read as a pass.
func unjudged(runs []reports.Run) error {
	judged, why := map[string]int{}, map[string]string{}
	for _, r := range runs {
		if r.Control() || r.Controller == "" {
			continue
		}
		judged[r.Controller] += 0 // known, judged or not
		if r.Verdict != "skip" {
			judged[r.Controller]++
		} else if why[r.Controller] == "" {
			why[r.Controller] = r.Skipped
		}
	}
	var errs []error
	total, reason := 0, ""
	for _, r := range runs {
		if r.Verdict != "skip" {
			total++
		} else if reason == "" {
			reason = r.Skipped
		}
	}
	if total == 0 && len(runs) > 0 {
		// A set-up that skipped the suite (kubelet nodes on a machine that
		// cannot run containers) judged nothing: not a pass.
		if reason == "" {
			reason = "see the set-up's output above"
		}
		errs = append(errs, fmt.Errorf("no verdict: every spec was skipped (%s)", reason))
	}
	for _, c := range sortedNames(judged) {
		if judged[c] == 0 {
			errs = append(errs, fmt.Errorf("no verdict on %s: every run of it was skipped (%s)", c, why[c]))
		}
	}
	return errors.Join(errs...)
}

func sortedNames(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// printVerdicts writes a verdict table per release and suite, then each
// failure's first line, and returns the number of failed specs.
func printVerdicts(w io.Writer, runs []reports.Run) int {
	type key struct{ version, suite string }
	count := map[key]map[string]int{}
	var keys []key
	var failures []string
	for _, r := range runs {
		// A row per kind of cluster too: the same suite on kubelet nodes,
		// or with feature gates, is a run of its own.
		k := key{r.Version, r.Suite}
		if r.Nodes != "" {
			k.suite += " (" + r.Nodes + " nodes)"
		}
		if r.Gates != "" {
			k.suite += " (" + r.Gates + ")"
		}
		if count[k] == nil {
			count[k] = map[string]int{}
			keys = append(keys, k)
		}
		// The test's verdict: a negative control passes when it catches its
		// broken controller.
		count[k][r.SpecVerdict]++
		if r.SpecVerdict == "FAIL" {
			first, _, _ := strings.Cut(strings.TrimSpace(strings.Join(r.Failures, "\n")), "\n")
			failures = append(failures, fmt.Sprintf("  FAIL %s (Kubernetes %s): %s", r.Spec, r.Version, first))
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].version != keys[j].version {
			return keys[i].version < keys[j].version
		}
		return keys[i].suite < keys[j].suite
	})
	fmt.Fprintf(w, "\njobconform verdicts\n  %-12s %-44s %6s %6s %7s\n", "Kubernetes", "suite", "passed", "failed", "skipped")
	total := 0
	for _, k := range keys {
		c := count[k]
		fmt.Fprintf(w, "  %-12s %-44s %6d %6d %7d\n", orDefault(k.version, "?"), k.suite, c["PASS"], c["FAIL"], c["skip"])
		total += c["FAIL"]
	}
	for _, f := range failures {
		fmt.Fprintln(w, f)
	}
	printOracleTallies(w, runs)
	return total
}

// printOracleTallies writes, per controller other than the built-in, how
// many of its runs the differential verdict compared with the built-in's
// and how many it did not judge, and why: never silent (issue #56).
func printOracleTallies(w io.Writer, runs []reports.Run) {
	ts := reports.OracleTallies(runs)
	if len(ts) == 0 {
		return
	}
	fmt.Fprintf(w, "\njobconform differential verdict (each run compared with the built-in's of the same scenario)\n")
	for _, t := range ts {
		fmt.Fprintf(w, "  %-44s %s\n", t.Column, t)
	}
}
