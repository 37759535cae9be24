package harness

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/jobconform/jobconform/internal/buildinfo"
	"github.com/jobconform/jobconform/internal/recorder"
	"github.com/jobconform/jobconform/reports"
	"github.com/jobconform/jobconform/suites/internal/runner"
)

// ResultOf is r as the reports read it.
func ResultOf(r *runner.Result, features []string) reports.Result {
	res := reports.Result{Scenario: r.Scenario, Controller: r.Controller, Version: r.Version, Features: features, Failures: r.Failures(),
		Skipped: r.Skipped, Seconds: r.End.Sub(r.Start).Seconds(), Seed: r.Seed, Faults: r.Faults, Nodes: r.Nodes, Gates: r.Gates,
		TailPending: r.TailPending, Again: r.Again, Jobconform: buildinfo.Read().Label()}
	if r.Starvation.Samples > 0 {
		m := r.Starvation
		res.Starvation = &m
	}
	if len(r.TailPending) > 0 {
		res.TailWait = r.TailWait.Seconds()
	}
	for _, inv := range r.Invariants {
		for _, v := range inv.Violations {
			res.Violations = append(res.Violations, reports.Violation{Invariant: v.Invariant, Time: v.Time, Seq: v.Seq, Revision: v.Revision, Message: v.Message})
		}
		for _, u := range inv.Unjudged {
			res.Unjudged = append(res.Unjudged, inv.Invariant+": "+u)
		}
	}
	if r.Compared || r.OracleNote != "" {
		res.Oracle = &reports.Oracle{Compared: r.Compared, Note: r.OracleNote}
		if r.Compared {
			res.Oracle.Timed, res.Oracle.Untimed = r.Untimed == "", r.Untimed
		}
		for _, d := range r.Differences {
			res.Oracle.Differences = append(res.Oracle.Differences, reports.Difference{Field: d.Field, BuiltIn: d.BuiltIn, Other: d.Other, Allowed: d.Allowed})
		}
	}
	for _, l := range r.MirrorLags {
		res.MirrorLags = append(res.MirrorLags, l.Seconds())
	}
	for _, c := range r.Chaos {
		a := reports.ChaosAction{Time: c.Time.Format("15:04:05.000"), Log: c.Log, Effect: c.Effect}
		if c.Experiment != nil {
			a.Experiment = c.Experiment.Lines()
		}
		if c.Err != nil {
			a.Error = c.Err.Error()
		}
		res.Chaos = append(res.Chaos, a)
	}
	return res
}

// Attach adds r to the current spec's report: its Result and its timeline
// (never shown on the terminal), and on failure the timeline as text.
func Attach(r *runner.Result, features []string) {
	lines, err := r.Timeline.Lines()
	attach(r, ResultOf(r, features), lines, err, true)
}

// AttachFigures is Attach for the scale suite: the run's measurements
// kept with its Result, and its timeline as the reports draw it
// (reports.CompactLines) — a 10,000-pod recording in full would be
// hundreds of megabytes in the report and in the suite's memory — and no
// timeline text on failure, for the same reason: the verdict names the
// broken step or invariant, the report draws the run.
func AttachFigures(r *runner.Result, features []string, f *reports.Figures) {
	res := ResultOf(r, features)
	res.Figures = f
	lines, err := reports.CompactLines(r.Timeline)
	attach(r, res, lines, err, false)
}

func attach(r *runner.Result, result reports.Result, lines string, linesErr error, text bool) {
	res, _ := json.Marshal(result)
	ginkgo.AddReportEntry(reports.EntryResult, data(res), ginkgo.ReportEntryVisibilityNever)
	if linesErr != nil {
		lines = ""
		ginkgo.AddReportEntry("timeline not recorded", linesErr.Error())
	}
	ginkgo.AddReportEntry(reports.EntryTimeline, data(lines), ginkgo.ReportEntryVisibilityNever)
	if text && len(r.Failures()) > 0 {
		ginkgo.AddReportEntry("timeline", TimelineText(r), ginkgo.ReportEntryVisibilityFailureOrVerbose)
	}
}

// data is a report entry's value for programs: Ginkgo keeps a value twice,
// as JSON (AsJSON, what runOf reads) and as text (Representation, for
// people); for these the text is only their size, which halves a report (a
// timeline is most of it).
type data string

func (d data) String() string { return fmt.Sprintf("(%d bytes of JSON: see AsJSON)", len(d)) }

// TimelineText is the Job's and pods' changes, a line each, for a failure report.
func TimelineText(r *runner.Result) string {
	var b strings.Builder
	for _, c := range r.Chaos {
		fmt.Fprintf(&b, "%s chaos %s -> %s\n", c.Time.Format("15:04:05.000"), c.Log, c.Effect)
		if c.Experiment != nil {
			b.WriteString(strings.Join(c.Experiment.Lines(), "\n") + "\n")
		}
	}
	for _, e := range r.Timeline {
		if e.Kind == "Job" || e.Kind == "Pod" {
			b.WriteString(recorder.Describe(e) + "\n")
		}
	}
	return b.String()
}

// ExpectAgain judges the built-in's run again (Oracle.Spec's second, nil
// when there was none) as its first run was judged, with its timeline
// attached when it failed: the report's result and timeline are the first's.
func ExpectAgain(again *runner.Result, why string) {
	ginkgo.GinkgoHelper()
	if again == nil {
		return
	}
	if len(again.Failures()) > 0 {
		ginkgo.AddReportEntry("timeline of the run again", TimelineText(again), ginkgo.ReportEntryVisibilityFailureOrVerbose)
	}
	gomega.Expect(again.Failures()).To(gomega.BeEmpty(), "%s, its run again (for the noise)", why)
}
