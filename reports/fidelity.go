package reports

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Fidelity compares the runs of the same scenario and controller on kwok
// nodes and on kubelet nodes: what a Job controller saw of the pods, and what
// it wrote into the Job. Timing is left out; order and values are compared.
type FidelityRow struct {
	Scenario, Controller string
	// KwokVerdict and KubeletVerdict are the two runs' verdicts.
	KwokVerdict, KubeletVerdict string
	// Conditions: the Job's True conditions in the order they appeared.
	// Final: the Job's counters at the end. Steps: every distinct status.
	// Pods: each pod's distinct phase / Ready / exit code / reason sequence.
	Conditions, Final, Steps, Pods bool
	// Diff describes the first difference of each kind, for people.
	Diff []string
}

// Same tells whether nothing differed.
func (r FidelityRow) Same() bool { return r.Conditions && r.Final && r.Steps && r.Pods }

// Fidelity pairs kwok's and the kubelet's runs by scenario and controller.
// Runs present on one side only are left out.
func Fidelity(kwok, kubelet []Run) []FidelityRow {
	key := func(r Run) string { return r.Scenario + "\x00" + r.Controller }
	other := map[string]Run{}
	for _, r := range kubelet {
		if r.Scenario != "" {
			other[key(r)] = r
		}
	}
	var rows []FidelityRow
	for _, a := range kwok {
		b, ok := other[key(a)]
		if !ok || a.Scenario == "" {
			continue
		}
		rows = append(rows, compareRuns(a, b))
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Scenario != rows[j].Scenario {
			return rows[i].Scenario < rows[j].Scenario
		}
		return rows[i].Controller < rows[j].Controller
	})
	return rows
}

func compareRuns(a, b Run) FidelityRow {
	row := FidelityRow{Scenario: a.Scenario, Controller: a.Controller, KwokVerdict: a.Verdict, KubeletVerdict: b.Verdict}
	ja, jb := jobSteps(a.Events), jobSteps(b.Events)
	ca, cb := conditionOrder(a.Events), conditionOrder(b.Events)
	row.Conditions = equal(ca, cb)
	if !row.Conditions {
		row.Diff = append(row.Diff, fmt.Sprintf("conditions: kwok %v, kubelet %v", ca, cb))
	}
	row.Final = len(ja) > 0 && len(jb) > 0 && ja[len(ja)-1] == jb[len(jb)-1]
	if !row.Final {
		row.Diff = append(row.Diff, fmt.Sprintf("final status: kwok %q, kubelet %q", last(ja), last(jb)))
	}
	row.Steps = equal(ja, jb)
	if !row.Steps {
		row.Diff = append(row.Diff, "status steps: "+firstDifference(ja, jb))
	}
	pa, pb := podSteps(a.Events), podSteps(b.Events)
	row.Pods = len(pa) == len(pb)
	if !row.Pods {
		row.Diff = append(row.Diff, fmt.Sprintf("pods: kwok %d, kubelet %d", len(pa), len(pb)))
	}
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if !equal(pa[i].steps, pb[i].steps) {
			row.Pods = false
			row.Diff = append(row.Diff, fmt.Sprintf("pod #%d%s: %s", i+1, pa[i].label(), firstDifference(pa[i].steps, pb[i].steps)))
			break
		}
	}
	return row
}

func last(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func firstDifference(a, b []string) string {
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return fmt.Sprintf("step %d: kwok %q, kubelet %q", i+1, x, y)
		}
	}
	return ""
}

// jobSteps is the Job's distinct statuses in order.
func jobSteps(events []Event) []string {
	var out []string
	for _, e := range events {
		if e.Kind != "Job" || e.Type == "DELETED" {
			continue
		}
		s := fmt.Sprintf("%s active=%d ready=%d terminating=%d failed=%d succeeded=%d",
			strings.Join(e.Conditions, ","), e.Active, e.Ready, e.Terminating, e.Failed, e.Succeeded)
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}

// conditionOrder is the order in which the Job's conditions first became True.
func conditionOrder(events []Event) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range events {
		if e.Kind != "Job" {
			continue
		}
		for _, c := range e.Conditions {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}

type podHistory struct {
	index string
	steps []string
}

func (p podHistory) label() string {
	if p.index == "" {
		return ""
	}
	return " (index " + p.index + ")"
}

// podSteps is each pod's distinct (phase, Ready, exit code, reason) states, the
// pods in the order they were created (by completion index first, for
// Indexed Jobs, since pods of different indexes race).
func podSteps(events []Event) []podHistory {
	byName := map[string]*podHistory{}
	var order []string
	first := map[string]int{}
	for i, e := range events {
		if e.Kind != "Pod" || e.Type == "DELETED" {
			continue
		}
		h, ok := byName[e.Name]
		if !ok {
			h = &podHistory{index: e.Index}
			byName[e.Name] = h
			order = append(order, e.Name)
			first[e.Name] = i
		}
		code := "-"
		if e.ExitCode != nil {
			code = strconv.Itoa(int(*e.ExitCode))
		}
		s := fmt.Sprintf("%s ready=%t exit=%s %s", e.Phase, e.PodReady, code, e.Reason)
		if len(h.steps) == 0 || h.steps[len(h.steps)-1] != s {
			h.steps = append(h.steps, s)
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := byName[order[i]], byName[order[j]]
		if a.index != b.index {
			ai, _ := strconv.Atoi(a.index)
			bi, _ := strconv.Atoi(b.index)
			return ai < bi
		}
		return first[order[i]] < first[order[j]]
	})
	out := make([]podHistory, 0, len(order))
	for _, n := range order {
		out = append(out, *byName[n])
	}
	return out
}

// WriteFidelity writes the table in Markdown.
func WriteFidelity(w io.Writer, rows []FidelityRow) {
	same := 0
	conds := 0
	for _, r := range rows {
		if r.Same() {
			same++
		}
		if r.Conditions && r.Final {
			conds++
		}
	}
	fmt.Fprintf(w, "Fidelity: %d/%d runs identical on kwok and kubelet nodes; %d/%d with the same conditions in the same order and the same final status.\n\n", same, len(rows), conds, len(rows))
	fmt.Fprintln(w, "| scenario | controller | kwok | kubelet | conditions | final | steps | pods | first differences |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	mark := func(b bool) string {
		if b {
			return "="
		}
		return "≠"
	}
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Scenario, r.Controller, r.KwokVerdict, r.KubeletVerdict,
			mark(r.Conditions), mark(r.Final), mark(r.Steps), mark(r.Pods), strings.ReplaceAll(strings.Join(r.Diff, "; "), "|", "\\|"))
	}
}
