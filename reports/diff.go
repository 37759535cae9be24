package reports

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// Slower beyond noise: a run that took both SlowerFactor times and
// SlowerBy seconds more than before. Both, because a 2 s scenario varies by
// half on a loaded machine and a 300 s one by tens of seconds.
const (
	SlowerFactor = 1.5
	SlowerBy     = 20.0
)

// Change is one run whose verdict or time moved between two runs of the
// suites (a spec is the same when its suite, controller, release, nodes,
// gates and scenario are).
type Change struct {
	Key                 string
	Before, After       string // verdicts; "" where the run is absent
	BeforeSec, AfterSec float64
	First               string // the new run's first failure
}

// Diff is what a CI gate says of a change: what newly fails, what newly
// passes, what got slower beyond noise, and what ran on one side only.
type Diff struct {
	NewlyFailing, NewlyPassing, Slower, OnlyBefore, OnlyAfter []Change
	Same                                                      int
	// Before and After are the jobconform builds that judged each side
	// (Makers): a difference between them may be jobconform's own.
	Before, After []string
}

// Compare compares the runs of two suite runs. A run of a controller
// broken on purpose (--reference-faults) is compared as that controller's:
// what a change that broke it would show.
func Compare(before, after []Run) Diff {
	key := func(r Run) string { return columnOf(r).String() + " " + r.Suite + ": " + r.Scenario }
	old := map[string]Run{}
	for _, r := range before {
		old[key(r)] = r
	}
	d := Diff{Before: Makers(before), After: Makers(after)}
	seen := map[string]bool{}
	for _, r := range after {
		k := key(r)
		seen[k] = true
		c := Change{Key: k, After: r.Verdict, AfterSec: r.Seconds}
		if len(r.Failures) > 0 {
			c.First = r.Failures[0]
		}
		o, ok := old[k]
		if !ok {
			d.OnlyAfter = append(d.OnlyAfter, c)
			continue
		}
		c.Before, c.BeforeSec = o.Verdict, o.Seconds
		switch {
		case r.Verdict == "FAIL" && o.Verdict != "FAIL":
			d.NewlyFailing = append(d.NewlyFailing, c)
		case r.Verdict == "PASS" && o.Verdict == "FAIL":
			d.NewlyPassing = append(d.NewlyPassing, c)
		case r.Verdict != "skip" && o.Verdict != "skip" && r.Seconds > o.Seconds*SlowerFactor && r.Seconds-o.Seconds > SlowerBy:
			d.Slower = append(d.Slower, c)
		default:
			d.Same++
		}
	}
	for k, o := range old {
		if !seen[k] {
			d.OnlyBefore = append(d.OnlyBefore, Change{Key: k, Before: o.Verdict, BeforeSec: o.Seconds})
		}
	}
	for _, cs := range [][]Change{d.NewlyFailing, d.NewlyPassing, d.Slower, d.OnlyBefore, d.OnlyAfter} {
		sort.Slice(cs, func(i, j int) bool { return cs[i].Key < cs[j].Key })
	}
	return d
}

// Regressed tells whether anything newly fails.
func (d Diff) Regressed() bool { return len(d.NewlyFailing) > 0 }

// WriteDiff writes the comparison as Markdown (what summary.md and a CI
// job page show), newly failing first.
func WriteDiff(w io.Writer, d Diff) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## Compared with the baseline\n\n%d newly failing, %d newly passing, %d slower beyond noise (×%.1f and +%.0fs), %d unchanged; %d only in the baseline, %d new\n",
		len(d.NewlyFailing), len(d.NewlyPassing), len(d.Slower), SlowerFactor, SlowerBy, d.Same, len(d.OnlyBefore), len(d.OnlyAfter))
	if len(d.Before) > 0 && len(d.After) > 0 && !slices.Equal(d.Before, d.After) {
		fmt.Fprintf(&b, "\nThe two were judged by different builds of jobconform (baseline %s, this run %s): a change may be jobconform's own.\n",
			strings.Join(d.Before, " and "), strings.Join(d.After, " and "))
	}
	list := func(title string, cs []Change, line func(Change) string) {
		if len(cs) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n### %s\n\n", title)
		for _, c := range cs {
			fmt.Fprintf(&b, "- %s\n", line(c))
		}
	}
	list("Newly failing", d.NewlyFailing, func(c Change) string {
		return fmt.Sprintf("**%s** (was %s): %s", c.Key, c.Before, strings.ReplaceAll(c.First, "\n", " "))
	})
	list("Newly passing", d.NewlyPassing, func(c Change) string { return c.Key })
	list("Slower", d.Slower, func(c Change) string {
		return fmt.Sprintf("%s: %.0fs → %.0fs", c.Key, c.BeforeSec, c.AfterSec)
	})
	list("Only in the baseline", d.OnlyBefore, func(c Change) string { return fmt.Sprintf("%s (%s)", c.Key, c.Before) })
	list("New", d.OnlyAfter, func(c Change) string { return fmt.Sprintf("%s (%s)", c.Key, c.After) })
	_, err := io.WriteString(w, b.String())
	return err
}
