// Package ginkgoreport reads the suites' Ginkgo JSON reports: Load takes the
// runs a spec attached (suites/internal/harness.Attach writes them) out of
// Ginkgo's JSON for the reports package, which knows no Ginkgo. The verdict
// table printed at the end of a suite lives here too.
package ginkgoreport

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/jobconform/jobconform/reports"
)

// Load reads Ginkgo JSON report files and returns their runs, sorted (reports.Sort).
func Load(paths ...string) ([]reports.Run, error) {
	var runs []reports.Run
	err := eachSpec(paths, func(path, suite string, sr types.SpecReport) error {
		if unselected(sr) {
			return nil
		}
		r, err := runOf(suite, sr, true)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", path, sr.FullText(), err)
		}
		runs = append(runs, r)
		return nil
	})
	reports.Sort(runs)
	return runs, err
}

// Runs are the runs of a suite's report as it ends (ReportAfterSuite),
// without their timelines: what tables of verdicts and figures need.
func Runs(report types.Report) ([]reports.Run, error) {
	var runs []reports.Run
	for _, sr := range report.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt {
			continue
		}
		r, err := runOf(report.SuiteDescription, sr, false)
		if err != nil {
			return runs, fmt.Errorf("%s: %w", sr.FullText(), err)
		}
		runs = append(runs, r)
	}
	reports.Sort(runs)
	return runs, nil
}

// Durations reads Ginkgo JSON report files and returns the wall time of each
// spec that ran (passed or failed, not skipped): suite description → spec's
// own text → seconds, the longest where a spec ran more than once.
func Durations(paths ...string) (map[string]map[string]float64, error) {
	out := map[string]map[string]float64{}
	err := eachSpec(paths, func(_, suite string, sr types.SpecReport) error {
		if sr.State.Is(types.SpecStateSkipped | types.SpecStatePending) {
			return nil
		}
		if out[suite] == nil {
			out[suite] = map[string]float64{}
		}
		if secs := math.Round(sr.RunTime.Seconds()*10) / 10; secs > out[suite][sr.LeafNodeText] {
			out[suite][sr.LeafNodeText] = secs
		}
		return nil
	})
	return out, err
}

// eachSpec calls f for every It spec of the Ginkgo JSON report files.
func eachSpec(paths []string, f func(path, suite string, sr types.SpecReport) error) error {
	for _, p := range paths {
		suites, err := ReadReports(p)
		if err != nil {
			return err
		}
		for _, rep := range suites {
			for _, sr := range rep.SpecReports {
				if sr.LeafNodeType != types.NodeTypeIt {
					continue
				}
				if err := f(p, rep.SuiteDescription, sr); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// entryText is a report entry's text value: from its JSON in a report read
// back from a file, from the value itself in a report still in memory
// (Ginkgo fills AsJSON only when it writes the report).
func entryText(e types.ReportEntry) (string, bool) {
	if e.Value.AsJSON != "" {
		var v string
		err := json.Unmarshal([]byte(e.Value.AsJSON), &v)
		return v, err == nil
	}
	if raw := reflect.ValueOf(e.Value.GetRawValue()); raw.Kind() == reflect.String {
		return raw.String(), true
	}
	return "", false
}

// unselected: a spec the run's filters (labels, focus, controllers) left
// out — skipped without a word or a result. It is no verdict; a spec
// skipped as not applicable says why.
func unselected(sr types.SpecReport) bool {
	if !sr.State.Is(types.SpecStateSkipped) || sr.Failure.Message != "" {
		return false
	}
	for _, e := range sr.ReportEntries {
		if e.Name == reports.EntryResult {
			return false
		}
	}
	return true
}

func runOf(suite string, sr types.SpecReport, timeline bool) (reports.Run, error) {
	s := reports.Spec{Suite: suite, Text: sr.FullText(), Leaf: sr.LeafNodeText, Labels: sr.Labels(), Seconds: sr.RunTime.Seconds(),
		Verdict: verdict(sr), FailureMessage: sr.Failure.Message, Interrupted: sr.State.Is(types.SpecStateInterrupted)}
	var res *reports.Result
	var lines, first string
	for _, e := range sr.ReportEntries {
		v, ok := entryText(e)
		if !ok {
			continue // not one of ours
		}
		switch e.Name {
		case reports.EntryResult:
			res = &reports.Result{}
			if err := json.Unmarshal([]byte(v), res); err != nil {
				return reports.Run{}, fmt.Errorf("%s entry: %w", reports.EntryResult, err)
			}
		case reports.EntryTimeline:
			if timeline {
				lines = v
			}
		case EntryFirstRun:
			first = v
		}
	}
	r, err := reports.NewRun(s, res, lines)
	if first != "" {
		r.Again = strings.Join(slices.DeleteFunc([]string{"run again by --rerun-failed: " + first, r.Again}, func(s string) bool { return s == "" }), "; ")
	}
	return r, err
}

func verdict(sr types.SpecReport) string {
	switch {
	case sr.State.Is(types.SpecStateSkipped):
		return "skip"
	case sr.State.Is(types.SpecStateFailureStates):
		return "FAIL"
	}
	return "PASS"
}

// PrintVerdicts writes the verdict table of a suite's report: failures first,
// each with the first line of its message, so that a log cut short (CI keeps
// a part) still shows what failed; then the rest by name. A spec is named with
// its containers below the suite's own (a drill's flight with its controller
// and drill).
func PrintVerdicts(w io.Writer, title string, report types.Report) {
	type row struct{ name, verdict, secs, why string }
	var rows []row
	count := map[string]int{}
	for _, sr := range report.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt {
			continue
		}
		v := verdict(sr)
		count[v]++
		name := sr.LeafNodeText
		if h := sr.ContainerHierarchyTexts; len(h) > 1 {
			name = strings.Join(append(append([]string(nil), h[1:]...), name), " ")
		}
		r := row{name: name, verdict: v, secs: fmt.Sprintf("%.1fs", sr.RunTime.Seconds())}
		if v == "FAIL" {
			r.why = failureWhy(sr.Failure.Message)
		}
		rows = append(rows, r)
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if fi, fj := rows[i].verdict == "FAIL", rows[j].verdict == "FAIL"; fi != fj {
			return fi
		}
		return rows[i].name < rows[j].name
	})
	fmt.Fprintf(w, "\n%s\n", title)
	for _, r := range rows {
		fmt.Fprintf(w, "  %-4s %7s  %s\n", r.verdict, r.secs, r.name)
		if r.why != "" {
			fmt.Fprintf(w, "              %s\n", r.why)
		}
	}
	fmt.Fprintf(w, "%d passed, %d failed, %d skipped\n", count["PASS"], count["FAIL"], count["skip"])
}

// failureWhy is a failure message on one line: its first line and, when
// Gomega reports an unexpected error under a description, the error's own
// first line too (the description alone rarely says what went wrong). When
// the spec failed on its list of failures (a scenario's broken steps and
// invariants, each naming a known upstream bug where there is one), the
// first of them instead, and how many more: the spec's name already says
// which scenario it was.
func failureWhy(msg string) string {
	lines := strings.Split(strings.TrimSpace(msg), "\n")
	why := lines[0]
	if first, n, ok := firstFailure(lines); ok {
		why = first
		if n > 1 {
			why = fmt.Sprintf("%s (and %d more)", clip(why, 300), n-1)
		}
		return clip(why, 400)
	}
	for i, l := range lines {
		if strings.TrimSpace(l) != "Unexpected error:" || i == 0 {
			continue
		}
		// Gomega: "Unexpected error:", "    <*T | 0x…>: ", then the error's text.
		for _, e := range lines[i+1:] {
			if e = strings.TrimSpace(e); e != "" && !strings.HasPrefix(e, "<") {
				why += ": " + e
				break
			}
		}
		break
	}
	return clip(why, 400)
}

func clip(s string, max int) string {
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "…"
	}
	return s
}

// failuresList matches Gomega's rendering of a []string it expected to be
// empty: "<[]string | len:3, cap:4>: [", then one quoted element a line, or
// a short list on the same line.
var failuresList = regexp.MustCompile(`^<\[\]string \| len:(\d+), cap:\d+>: \[(.*)$`)

// firstFailure is the first element of the []string Gomega rendered in
// lines, and the list's length.
func firstFailure(lines []string) (string, int, bool) {
	for i, l := range lines {
		m := failuresList.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		rest := strings.TrimSpace(m[2])
		if rest == "" && i+1 < len(lines) {
			rest = strings.TrimSpace(lines[i+1])
		}
		if q, err := strconv.QuotedPrefix(rest); err == nil {
			u, _ := strconv.Unquote(q)
			return u, n, true
		}
		// Cut short by Gomega (format.MaxLength): keep what is there.
		rest = strings.TrimPrefix(rest, `"`)
		return rest, n, rest != ""
	}
	return "", 0, false
}
