package reports

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Figures are what the scale suite measured of one run (issue #32): of the
// controller under test, and of the harness itself. Zero means not measured
// (a provider that runs no process here, an apiserver without an audit log).
type Figures struct {
	// Pods is the Job's completions; Created the pods the recording
	// saw created (replacements included).
	Pods    int `json:"pods"`
	Created int `json:"created"`
	// ToFinish is seconds from the Job's creation to its terminal condition
	// (to its removal from the API, for a Job the scenario deletes).
	ToFinish float64 `json:"toFinish"`
	// PeakCreates is the most pods created within one second.
	PeakCreates int `json:"peakCreates"`
	// Requests are the API requests the controller's user made during the
	// run (the apiserver's audit log), ByVerb by "verb resource".
	Requests int            `json:"requests"`
	ByVerb   map[string]int `json:"byVerb,omitempty"`
	// StatusWrites are its writes of jobs/status; Conflicts the requests the
	// apiserver answered 409, Throttled those it refused 429 (counted in
	// Requests too: each was sent, and client-go sent it again).
	StatusWrites int `json:"statusWrites"`
	Conflicts    int `json:"conflicts"`
	Throttled    int `json:"throttled,omitempty"`
	// Process is what CPUSeconds and PeakMemory measured: the reference
	// controller's own process, or kube-controller-manager (every controller
	// it runs, the Job controller's work most of it during the run).
	Process    string  `json:"process,omitempty"`
	CPUSeconds float64 `json:"cpuSeconds"`
	PeakMemory uint64  `json:"peakMemory"`
	// RunCPUSeconds is every process's: the control plane, kwok, the
	// controllers, the harness.
	RunCPUSeconds float64 `json:"runCPUSeconds"`
	// HarnessCPUSeconds is the suite process's (recorder, steps, judging);
	// JudgeSeconds the invariants' time over the recording, JudgeCPUSeconds
	// the suite process's processor time meanwhile; HarnessPeakMemory
	// the suite process's peak (whole life); RecordingEntries and
	// RecordingBytes the recording's size.
	HarnessCPUSeconds float64 `json:"harnessCPUSeconds"`
	JudgeSeconds      float64 `json:"judgeSeconds"`
	JudgeCPUSeconds   float64 `json:"judgeCPUSeconds,omitempty"`
	HarnessPeakMemory uint64  `json:"harnessPeakMemory"`
	RecordingEntries  int     `json:"recordingEntries"`
	RecordingBytes    int     `json:"recordingBytes"`
}

// podsMade is the pods the controller created (replacements included), the
// base of requests per pod: a Job failed or deleted mid-way gets a tenth of
// its completions' pods, and a controller slower to fail it makes more.
// The Job's completions when the recording counted none.
func (f *Figures) podsMade() int {
	if f.Created > 0 {
		return f.Created
	}
	return f.Pods
}

func (f *Figures) podsColumn() string {
	if f.Created == 0 || f.Created == f.Pods {
		return fmt.Sprint(f.Pods)
	}
	return fmt.Sprintf("%d (of %d)", f.Created, f.Pods)
}

// ScaleRows are the runs with figures, by scenario, the built-in first.
func ScaleRows(runs []Run) []Run {
	var out []Run
	for _, r := range runs {
		if r.Figures != nil {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Scenario != out[j].Scenario {
			return out[i].Scenario < out[j].Scenario
		}
		return controllerRank(out[i].Controller) < controllerRank(out[j].Controller)
	})
	return out
}

func controllerRank(c string) int {
	switch c {
	case "builtin":
		return 0
	case "reference":
		return 1
	}
	return 2
}

// WriteScaleTable writes the side-by-side table of the runs with figures (a
// Markdown table): per scenario, each controller's time to finish, peak
// creation rate, API requests per pod, status writes and conflicts, CPU and
// peak memory, each ratio to the built-in's in brackets; then the harness's
// own cost. Nothing when no run has figures.
func WriteScaleTable(w io.Writer, runs []Run) {
	rows := ScaleRows(runs)
	if len(rows) == 0 {
		return
	}
	base := map[string]*Figures{} // scenario → the built-in's figures
	for _, r := range rows {
		if r.Controller == "builtin" {
			base[r.Scenario] = r.Figures
		}
	}
	fmt.Fprintf(w, "| scenario | controller | verdict | pods created (of completions) | to finish | peak creates/s | API requests/pod | status writes | conflicts | refused 429 | CPU-s (process) | peak memory |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		f, b := r.Figures, base[r.Scenario]
		ratio := func(v, of float64) string {
			if b == nil || r.Controller == "builtin" || of == 0 || v == 0 {
				return ""
			}
			return fmt.Sprintf(" (%.2f×)", v/of)
		}
		perPod := func(f *Figures) float64 {
			if f == nil || f.podsMade() == 0 {
				return 0
			}
			return float64(f.Requests) / float64(f.podsMade())
		}
		var bf Figures
		if b != nil {
			bf = *b
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %.1fs%s | %d%s | %.2f%s | %d | %d | %d | %.1f%s (%s) | %s%s |\n",
			r.Scenario, r.Controller, r.Verdict, f.podsColumn(),
			f.ToFinish, ratio(f.ToFinish, bf.ToFinish),
			f.PeakCreates, ratio(float64(f.PeakCreates), float64(bf.PeakCreates)),
			perPod(f), ratio(perPod(f), perPod(b)),
			f.StatusWrites, f.Conflicts, f.Throttled,
			f.CPUSeconds, ratio(f.CPUSeconds, bf.CPUSeconds), orDash(f.Process),
			mib(f.PeakMemory), ratio(float64(f.PeakMemory), float64(bf.PeakMemory)))
	}
	fmt.Fprintf(w, "\nThe harness's own cost (the suite process: recorder, steps, invariants):\n\n")
	fmt.Fprintf(w, "| scenario | controller | harness CPU-s | share of the run's CPU | judged in (its CPU) | recording | harness peak memory (so far) |\n|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		f := r.Figures
		share := "–"
		if f.RunCPUSeconds > 0 {
			share = fmt.Sprintf("%.1f %% of %.0f s", 100*f.HarnessCPUSeconds/f.RunCPUSeconds, f.RunCPUSeconds)
		}
		judged := fmt.Sprintf("%.2fs", f.JudgeSeconds)
		if f.JudgeCPUSeconds > 0 {
			judged += fmt.Sprintf(" (%.2f CPU-s)", f.JudgeCPUSeconds)
		}
		fmt.Fprintf(w, "| %s | %s | %.1f | %s | %s | %d entries, %s | %s |\n", r.Scenario, r.Controller,
			f.HarnessCPUSeconds, share, judged, f.RecordingEntries, mib(uint64(f.RecordingBytes)), mib(f.HarnessPeakMemory))
	}
}

// ScaleTable is WriteScaleTable's text.
func ScaleTable(runs []Run) string {
	var b strings.Builder
	WriteScaleTable(&b, runs)
	return b.String()
}

func mib(n uint64) string {
	if n == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
