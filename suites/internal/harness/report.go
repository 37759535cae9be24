package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/jobconform/jobconform/reports"
	"github.com/jobconform/jobconform/suites/internal/recorder"
	"github.com/jobconform/jobconform/suites/internal/runner"
)

// Report entry names under which each spec keeps its run (Ginkgo JSON).
const (
	EntryResult   = reports.EntryResult
	EntryTimeline = reports.EntryTimeline
)

// Summary renders r as the jobconform.result entry.
func Summary(r *runner.Result, features []string) string {
	res := reports.Result{Scenario: r.Scenario, Controller: r.Controller, Version: r.Version, Features: features, Failures: r.Failures(),
		Skipped: r.Skipped, Seconds: r.End.Sub(r.Start).Seconds(), Seed: r.Seed}
	for _, c := range r.Chaos {
		a := reports.ChaosAction{Time: c.Time.Format("15:04:05.000"), Log: c.Log, Effect: c.Effect}
		if c.Err != nil {
			a.Error = c.Err.Error()
		}
		res.Chaos = append(res.Chaos, a)
	}
	b, _ := json.Marshal(res)
	return string(b)
}

// TimelineLines renders the timeline as JSON lines (time, type, kind, name, object).
func TimelineLines(r *runner.Result) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for _, e := range r.Timeline {
		_ = enc.Encode(map[string]any{"time": e.Time, "type": e.Type, "kind": e.Kind, "name": e.Name, "object": e.Object})
	}
	return b.String()
}

// TimelineText is the Job's and pods' changes, a line each, for a failure report.
func TimelineText(r *runner.Result) string {
	var b strings.Builder
	for _, c := range r.Chaos {
		fmt.Fprintf(&b, "%s chaos %s -> %s\n", c.Time.Format("15:04:05.000"), c.Log, c.Effect)
	}
	for _, e := range r.Timeline {
		if e.Kind == "Job" || e.Kind == "Pod" {
			b.WriteString(recorder.Describe(e) + "\n")
		}
	}
	return b.String()
}

// PrintVerdicts writes the verdict table of a suite's report.
func PrintVerdicts(w io.Writer, title string, report types.Report) {
	type row struct{ name, verdict, secs string }
	var rows []row
	pass, fail, skip := 0, 0, 0
	for _, sr := range report.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt {
			continue
		}
		verdict := "PASS"
		switch {
		case sr.State.Is(types.SpecStateSkipped):
			verdict = "skip"
			skip++
		case sr.State.Is(types.SpecStateFailureStates):
			verdict = "FAIL"
			fail++
		default:
			pass++
		}
		rows = append(rows, row{sr.LeafNodeText, verdict, fmt.Sprintf("%.1fs", sr.RunTime.Seconds())})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].name < rows[j].name })
	fmt.Fprintf(w, "\n%s\n", title)
	for _, r := range rows {
		fmt.Fprintf(w, "  %-4s %7s  %s\n", r.verdict, r.secs, r.name)
	}
	fmt.Fprintf(w, "%d passed, %d failed, %d skipped\n", pass, fail, skip)
}
