package main

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/jobconform/jobconform/reports"
)

// GitHub Actions (issue #71): where a run is a step of a GitHub job
// (GITHUB_ACTIONS=true), each suite's output folds into a group, the
// failures become annotations, and summary.md joins the job's summary
// page; validate -o github annotates the scenario files.

// inGitHubActions tells whether this runs as a step of a GitHub job.
func inGitHubActions() bool { return os.Getenv("GITHUB_ACTIONS") == "true" }

// ghGroup starts a folded group of the job's log titled title, and
// returns what ends it (nothing outside GitHub Actions).
func ghGroup(w io.Writer, title string) func() {
	if !inGitHubActions() {
		return func() {}
	}
	fmt.Fprintf(w, "::group::%s\n", ghData(title))
	return func() { fmt.Fprintln(w, "::endgroup::") }
}

// ghError writes an error annotation: file may be "" (none), line 0.
func ghError(w io.Writer, file string, line int, title, msg string) {
	var props []string
	if file != "" {
		props = append(props, "file="+ghProperty(file))
		if line > 0 {
			props = append(props, fmt.Sprintf("line=%d", line))
		}
	}
	if title != "" {
		props = append(props, "title="+ghProperty(title))
	}
	p := ""
	if len(props) > 0 {
		p = " " + strings.Join(props, ",")
	}
	fmt.Fprintf(w, "::error%s::%s\n", p, ghData(msg))
}

// ghData escapes a workflow command's message, ghProperty a property's
// value, as GitHub's toolkit does (command.ts).
func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func ghProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// ghAnnotateFailures writes an annotation per failed spec of runs: its
// spec and first failure.
func ghAnnotateFailures(w io.Writer, runs []reports.Run) {
	if !inGitHubActions() {
		return
	}
	for _, r := range runs {
		if r.SpecVerdict != "FAIL" {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimSpace(strings.Join(r.Failures, "\n")), "\n")
		ghError(w, "", 0, fmt.Sprintf("%s (Kubernetes %s)", r.Spec, r.Version), first)
	}
}

// ghStepSummary appends the run's summary.md to the job's summary page
// ($GITHUB_STEP_SUMMARY), when there is one.
func ghStepSummary(summary string) error {
	page := os.Getenv("GITHUB_STEP_SUMMARY")
	if page == "" || !inGitHubActions() {
		return nil
	}
	data, err := os.ReadFile(summary)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(page, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("GITHUB_STEP_SUMMARY: %w", err)
	}
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// lineOf finds the line a scenario error names ("line 12: …"), or 0.
var lineOf = regexp.MustCompile(`\bline (\d+)\b`)
