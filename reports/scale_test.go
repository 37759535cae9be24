package reports

import (
	"strings"
	"testing"
)

func TestScaleTable(t *testing.T) {
	runs := []Run{
		{Scenario: "s", Controller: "reference", Verdict: "PASS", Figures: &Figures{Pods: 100, Created: 100, ToFinish: 60, PeakCreates: 50, Requests: 200, Throttled: 7, CPUSeconds: 2, Process: "reference-controller",
			HarnessCPUSeconds: 1, RunCPUSeconds: 50, JudgeSeconds: 12.5, JudgeCPUSeconds: 2.25}},
		{Scenario: "s", Controller: "builtin", Verdict: "PASS", Figures: &Figures{Pods: 100, Created: 50, ToFinish: 50, PeakCreates: 100, Requests: 250, CPUSeconds: 4, Process: "kube-controller-manager",
			HarnessCPUSeconds: 1, RunCPUSeconds: 40, JudgeSeconds: 1}},
		{Scenario: "s", Controller: "reference-slowed", Verdict: "skip"}, // no figures: no row
	}
	got := ScaleTable(runs)
	lines := strings.Split(got, "\n")
	var rows []string
	for _, l := range lines {
		if strings.HasPrefix(l, "| s |") {
			rows = append(rows, l)
		}
	}
	want := []string{
		// the built-in first, the others with their ratios to it; requests
		// per pod the controller created, those refused 429 among them
		"| s | builtin | PASS | 50 (of 100) | 50.0s | 100 | 5.00 | 0 | 0 | 0 | 4.0 (kube-controller-manager) | – |",
		"| s | reference | PASS | 100 | 60.0s (1.20×) | 50 (0.50×) | 2.00 (0.40×) | 0 | 0 | 7 | 2.0 (0.50×) (reference-controller) | – |",
		// the harness's table: a judging's CPU shown only when measured
		"| s | builtin | 1.0 | 2.5 % of 40 s | 1.00s | 0 entries, – | – |",
		"| s | reference | 1.0 | 2.0 % of 50 s | 12.50s (2.25 CPU-s) | 0 entries, – | – |",
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s\nwhole table:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"), got)
	}
	if ScaleTable(runs[2:]) != "" {
		t.Error("a table with no figures")
	}
}
