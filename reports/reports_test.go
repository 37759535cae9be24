package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testdata/runs.json holds two real specs (trimmed; suites/ginkgoreport
// reads the same two out of Ginkgo's JSON): the built-in passing
// prp-failed-sigterm on v1.37.1, and a failing chaos run.
const fixture = "testdata/runs.json"

func load(t *testing.T) []Run {
	t.Helper()
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	var raw []struct {
		Spec   Spec
		Result *Result
		Lines  string
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	var runs []Run
	for _, r := range raw {
		run, err := NewRun(r.Spec, r.Result, r.Lines)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run)
	}
	Sort(runs)
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2", len(runs))
	}
	return runs
}

func TestNewRun(t *testing.T) {
	runs := load(t)
	fail, pass := runs[0], runs[1] // sorted by scenario
	if pass.Scenario != "prp-failed-sigterm" || pass.Controller != "builtin" || pass.Version != "v1.37.1" || pass.Verdict != "PASS" {
		t.Fatalf("pass run: %+v", pass)
	}
	if len(pass.Events) == 0 {
		t.Fatal("no timeline events")
	}
	if fail.Verdict != "FAIL" || len(fail.Violations) != 1 || fail.Violations[0].Invariant != "terminal-only-when-pods-terminal" || fail.Violations[0].Time.IsZero() {
		t.Fatalf("fail run: verdict %s violations %+v", fail.Verdict, fail.Violations)
	}
	if len(fail.Chaos) == 0 || fail.Seed == 0 {
		t.Fatalf("chaos run without its actions or seed: %+v", fail.Chaos)
	}
	if _, err := NewRun(Spec{Verdict: "PASS"}, nil, "not json\n"); err == nil || !strings.Contains(err.Error(), "timeline line 1") {
		t.Fatalf("a broken timeline line read: %v", err)
	}
}

var rectRE = regexp.MustCompile(`<rect class="pod-state (\w+)" x="([\d.]+)" y="(\d+)"`)

// The KEP-3939 picture: under podReplacementPolicy Failed the replacement's
// lane starts only where the old pod's lane turns Failed.
func TestTimelineShowsReplacementAfterFailed(t *testing.T) {
	svg := Timeline(load(t)[1])
	type rect struct {
		state string
		x     float64
	}
	lanes := map[string][]rect{} // by y
	var order []string
	for _, m := range rectRE.FindAllStringSubmatch(svg, -1) {
		x, _ := strconv.ParseFloat(m[2], 64)
		if _, ok := lanes[m[3]]; !ok {
			order = append(order, m[3])
		}
		lanes[m[3]] = append(lanes[m[3]], rect{m[1], x})
	}
	if len(order) != 2 {
		t.Fatalf("%d pod lanes, want 2 (old pod and replacement):\n%s", len(order), svg)
	}
	old, repl := lanes[order[0]], lanes[order[1]]
	states := map[string]float64{}
	for _, r := range old {
		if _, ok := states[r.state]; !ok {
			states[r.state] = r.x
		}
	}
	for _, s := range []string{"running", "terminating", "failed"} {
		if _, ok := states[s]; !ok {
			t.Fatalf("old pod's lane has no %s segment: %+v", s, old)
		}
	}
	if repl[0].x < states["failed"] {
		t.Fatalf("replacement starts at x=%.1f, before the old pod is Failed at x=%.1f", repl[0].x, states["failed"])
	}
	for _, want := range []string{`class="counter active"`, `class="counter terminating"`, `class="counter failed"`} {
		if !strings.Contains(svg, want) {
			t.Errorf("timeline lacks %s", want)
		}
	}
	fail := Timeline(load(t)[0])
	for _, want := range []string{`class="violation"`, `class="chaos"`, `class="condition"`, ">SuccessCriteriaMet<", ">Complete<"} {
		if !strings.Contains(fail, want) {
			t.Errorf("the failing chaos run's timeline lacks %s", want)
		}
	}
}

func TestLatencies(t *testing.T) {
	ds := Latencies(load(t)[1])
	if len(ds) != 1 || ds[0] < 9*time.Second || ds[0] > 20*time.Second {
		t.Fatalf("latencies %v: want one replacement about 10s after the deletion", ds)
	}
	n, med, _, mx := Stats([]time.Duration{3 * time.Second, time.Second, 2 * time.Second})
	if n != 3 || med != 2*time.Second || mx != 3*time.Second {
		t.Fatalf("Stats: %d %s %s", n, med, mx)
	}
}

func TestWriteIsSelfContained(t *testing.T) {
	dir := t.TempDir()
	path, err := Write(dir, "jobconform test", load(t))
	if err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(path)
	for _, want := range []string{`<table class="matrix verdicts"`, "builtin @ v1.37.1", `<svg class="timeline"`, `<svg class="histogram"`, `option>podReplacementPolicy<`} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("report lacks %s", want)
		}
	}
	// Offline: nothing is fetched (the SVG namespace is a name, not a fetch).
	for _, m := range regexp.MustCompile(`(?:src|href)="([^"#][^"]*)"`).FindAllSubmatch(page, -1) {
		t.Errorf("report refers to %s", m[1])
	}
	md, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
	if !strings.Contains(string(md), "| builtin @ v1.37.1 | 1 | 1 | 0 |") || !strings.Contains(string(md), "terminal-only-when-pods-terminal") {
		t.Fatalf("summary:\n%s", md)
	}
}

func TestCaughtBrokenControllerShowsFailing(t *testing.T) {
	res := &Result{Scenario: "s", Controller: "broken-x", Version: "v1.37.1", Faults: []string{"x"},
		Failures:   []string{"invariant replacement-waits-under-failed at 06:00:00.000 (seq 1, rv 2): pod p created"},
		Violations: []Violation{{Invariant: "replacement-waits-under-failed", Time: time.Now(), Seq: 1, Revision: 2, Message: "pod p created"}}}
	r, err := NewRun(Spec{Suite: "chaos", Leaf: "catches it", Verdict: "PASS"}, res, "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != "FAIL" || r.Controller != "broken-x" || len(r.Violations) != 1 || !r.Control() || !r.Caught() {
		t.Fatalf("run %+v: the broken controller must show failing with its violation, and caught", r)
	}
	missed, _ := NewRun(Spec{Suite: "chaos", Leaf: "misses it", Verdict: "FAIL"}, &Result{Scenario: "s", Controller: "broken-y", Faults: []string{"y"}}, "")
	if missed.Caught() {
		t.Fatal("a control whose spec failed was counted as caught")
	}
}

// A green run with negative controls says so: the controls are not failures
// in the headline or the summary, they are "faults caught".
func TestControlsApartFromVerdicts(t *testing.T) {
	runs := load(t)
	control, err := NewRun(Spec{Suite: "chaos", Leaf: "[broken-early-terminal] s", Verdict: "PASS"}, &Result{Scenario: "s", Controller: "broken-early-terminal", Version: "v1.37.1",
		Faults: []string{"early-terminal"}, Failures: []string{"invariant terminal-only-when-pods-terminal at ..."},
		Violations: []Violation{{Invariant: "terminal-only-when-pods-terminal", Time: time.Now(), Message: "Failed written while pod p was terminating"}}}, "")
	if err != nil {
		t.Fatal(err)
	}
	runs = append(runs, control)
	var html, md bytes.Buffer
	if err := WriteHTML(&html, runs, "t"); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, runs, "t"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1 passed, 1 failed, 0 skipped", "faults caught 1/1", "terminal-only-when-pods-terminal"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	if strings.Contains(html.String(), "<th>broken-early-terminal @ v1.37.1</th>") {
		t.Error("the control has a column in the verdict matrix")
	}
	if !strings.Contains(md.String(), "faults caught 1/1") || strings.Contains(md.String(), "| broken-early-terminal") {
		t.Errorf("summary:\n%s", md.String())
	}
}

// A fault run through several scenarios is one row: caught when any of them
// fails the broken controller, missed when none does.
func TestControlsGroupedByFault(t *testing.T) {
	mk := func(fault, scenario string, caught bool) Run {
		res := &Result{Scenario: scenario, Controller: "reference", Version: "v1.37.1", Faults: []string{fault}}
		if caught {
			res.Failures = []string{"invariant ledger at ..."}
			res.Violations = []Violation{{Invariant: "ledger", Time: time.Now(), Message: "failed=2, but its pods say 1"}}
		}
		r, err := NewRun(Spec{Suite: "chaos", Leaf: scenario, Verdict: "PASS"}, res, "")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	runs := []Run{mk("a", "s1", false), mk("a", "s2", true), mk("b", "s1", false), mk("b", "s3", false)}
	rows := faultRows(runs, func(i int) string { return "" })
	if len(rows) != 2 || !rows[0].Caught || rows[0].Runs != 2 || strings.Join(rows[0].By, ";") != "s2: ledger" || rows[1].Caught || rows[1].Runs != 2 {
		t.Fatalf("rows %+v", rows)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, runs, "t"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "faults caught 1/2") || !strings.Contains(md.String(), "MISSED: b (reference") {
		t.Errorf("summary:\n%s", md.String())
	}
}

// A drill's apiserver changes draw bands of the version in force, each from
// its change on, in order.
func TestTimelineDrawsVersionBands(t *testing.T) {
	r := load(t)[1]
	t0 := r.Events[0].Time
	clock := func(d time.Duration) string { return t0.Add(d).Format("15:04:05.000") }
	r.Chaos = []ChaosAction{
		{Time: clock(time.Second), Log: "step 1: kube-apiserver v1.36.3 → v1.37.1", Effect: "kube-apiserver runs v1.37.1"},
		{Time: clock(1500 * time.Millisecond), Log: "step 1: kube-controller-manager v1.36.3 → v1.37.1", Effect: "kube-controller-manager runs v1.37.1"},
		{Time: clock(3 * time.Second), Log: "step 2: kube-controller-manager v1.37.1 → v1.36.3", Effect: "kube-apiserver runs v1.36.3"},
	}
	svg := Timeline(r)
	bands := regexp.MustCompile(`class="version-band" x="([0-9.]+)"[^>]*><title>from here the apiserver runs (v[0-9.]+)</title>`).FindAllStringSubmatch(svg, -1)
	if len(bands) != 2 || bands[0][2] != "v1.37.1" || bands[1][2] != "v1.36.3" {
		t.Fatalf("bands %v, want v1.37.1 then v1.36.3:\n%s", bands, svg)
	}
	x0, _ := strconv.ParseFloat(bands[0][1], 64)
	x1, _ := strconv.ParseFloat(bands[1][1], 64)
	if x1 <= x0 {
		t.Errorf("the second band starts at %.1f, not after the first (%.1f)", x1, x0)
	}
}

// A Job of thousands of pods is drawn as stacked columns of pod states, not a
// lane per pod: its timeline stays small enough for a browser.
func TestTimelineCompactForLargeJobs(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)
	var evs []Event
	const n = 10000
	for i := range n {
		name := fmt.Sprintf("job-%d", i)
		at := t0.Add(time.Duration(i) * time.Millisecond)
		evs = append(evs, Event{Time: at, Type: "ADDED", Kind: "Pod", Name: name, Phase: "Pending"},
			Event{Time: at.Add(time.Second), Type: "MODIFIED", Kind: "Pod", Name: name, Phase: "Running"},
			Event{Time: at.Add(20 * time.Second), Type: "MODIFIED", Kind: "Pod", Name: name, Phase: "Succeeded"})
	}
	evs = append(evs, Event{Time: t0.Add(40 * time.Second), Type: "MODIFIED", Kind: "Job", Name: "job", Succeeded: n, Conditions: []string{"Complete"}})
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Time.Before(evs[j].Time) })
	svg := Timeline(Run{Scenario: "large", Events: evs})
	if strings.Contains(svg, `class="pod-state`) || !strings.Contains(svg, `class="pod-band running"`) {
		t.Fatal("a 10,000-pod Job drawn with a lane per pod")
	}
	t.Logf("%d bytes", len(svg))
	if len(svg) > 300_000 {
		t.Errorf("the timeline of 10,000 pods is %d bytes", len(svg))
	}
	if !strings.Contains(svg, ": 10000 succeeded</title>") || !strings.Contains(svg, "10000 pods") {
		t.Errorf("the last column does not count every pod succeeded:\n%.2000s", svg)
	}
	// A small Job keeps its lanes.
	if small := Timeline(Run{Scenario: "small", Events: evs[:6]}); !strings.Contains(small, `class="pod-state`) {
		t.Error("a small Job lost its pod lanes")
	}
}

// A dispatched Job's chart keeps the manager's Job and the worker's copy
// apart: the copy dashed over the manager's solid lines, never one series
// alternating between the two.
func TestTimelineDrawsTheCopyApart(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	r := Run{Scenario: "s", Events: []Event{
		{Time: t0, Type: "ADDED", Kind: "Job", Name: "job"},
		{Time: t0.Add(time.Second), Type: "MODIFIED", Kind: "Job", Name: "job@worker", Active: 2},
		{Time: t0.Add(2 * time.Second), Type: "MODIFIED", Kind: "Job", Name: "job", Active: 2},
		{Time: t0.Add(3 * time.Second), Type: "MODIFIED", Kind: "Pod", Name: "p", Phase: "Running"},
	}}
	svg := Timeline(r)
	for _, want := range []string{`class="counter active"`, `class="counter copy active"`, `stroke-dasharray="4,3"`, "dashed: the worker's copy"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the dispatched run's timeline lacks %s", want)
		}
	}
	if strings.Contains(Timeline(load(t)[1]), "counter copy") {
		t.Error("a run without a copy draws one")
	}
}

// What a check could not judge is on the run's section, not lost.
func TestWriteShowsUnjudged(t *testing.T) {
	runs := load(t)
	runs[0].Unjudged = []string{"ledger: the whole ledger: the recording broke from 10:00:01 to 10:00:09"}
	var b bytes.Buffer
	if err := WriteHTML(&b, runs, "t"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "not judged — ledger: the whole ledger: the recording broke") {
		t.Fatal("the report does not say what was not judged")
	}
}

// The first screen answers "which controller failed what": one line per
// controller and release (the suites' own checks last), then every failed
// run with its first failure and a link to it; each suite's matrix has
// only its own columns.
func TestAtAGlance(t *testing.T) {
	runs := []Run{
		{Suite: "jobconform conformance", Scenario: "a", Controller: "reference", Version: "v1.37.1", Verdict: "PASS"},
		{Suite: "jobconform conformance", Scenario: "b", Controller: "reference", Version: "v1.37.1", Verdict: "FAIL", Failures: []string{"step 1 (await active=1): not reached", "invariant x"}},
		{Suite: "jobconform conformance", Scenario: "a", Controller: "builtin", Version: "v1.37.1", Verdict: "PASS"},
		{Suite: "jobconform conformance", Scenario: "b", Controller: "builtin", Version: "v1.37.1", Verdict: "skip"},
		{Suite: "jobconform chaos", Scenario: "c", Controller: "builtin", Version: "v1.37.1", Verdict: "FAIL", Failures: []string{"invariant y"}},
		{Suite: "jobconform drills", Scenario: "keeps every field", Verdict: "PASS"},
		{Suite: "jobconform conformance", Scenario: "a", Controller: "reference", Version: "v1.37.1", Verdict: "FAIL", Faults: []string{"no-backoff"}},
	}
	p := build(runs, "t")
	var lines []string
	for _, g := range p.Glance {
		lines = append(lines, fmt.Sprintf("%s %d/%d/%d", g.Column, g.Pass, g.Fail, g.Skip))
	}
	want := []string{"builtin @ v1.37.1 1/1/1", "reference @ v1.37.1 1/1/0", "jobconform drills (the suite's own checks) 1/0/0"}
	if !slices.Equal(lines, want) {
		t.Errorf("glance lines %q, want %q (a control is no verdict)", lines, want)
	}
	var failed []string
	for _, f := range p.Failed {
		failed = append(failed, f.Scenario+": "+f.First+fmt.Sprintf(" +%d", f.More))
		if f.Anchor == "" {
			t.Errorf("failure %s links nowhere", f.Scenario)
		}
	}
	if want := []string{"c: invariant y +0", "b: step 1 (await active=1): not reached +1"}; !slices.Equal(failed, want) {
		t.Errorf("failures %q, want %q", failed, want)
	}
	var suites []string
	for _, m := range p.Matrices {
		suites = append(suites, fmt.Sprintf("%s %v %d", m.Suite, m.Columns, len(m.Rows)))
	}
	if want := []string{"jobconform chaos [builtin @ v1.37.1] 1", "jobconform conformance [builtin @ v1.37.1 reference @ v1.37.1] 2", "jobconform drills [jobconform drills] 1"}; !slices.Equal(suites, want) {
		t.Errorf("matrices %q, want %q", suites, want)
	}
	var md bytes.Buffer
	if err := WriteHTML(&md, runs[:4], "t"); err != nil || !strings.Contains(md.String(), `<ol class="failures">`) {
		t.Errorf("the page lists no failure: %v", err)
	}
	md.Reset()
	if err := WriteHTML(&md, runs[:1], "t"); err != nil || !strings.Contains(md.String(), `<p class="none">none</p>`) {
		t.Errorf("a page without failures does not say none: %v", err)
	}
}

// A drill's flights are rows of that drill's matrix, the step each started
// at a column of its controller's path, with the flight's own time.
func TestDrillMatrix(t *testing.T) {
	path := "v1.36.3→v1.37.1→v1.36.3→v1.37.1"
	var runs []Run
	for _, ctl := range []string{"builtin", "reference"} {
		for _, step := range []string{"0", "1"} {
			for _, fl := range []string{"flight-sigterm", "flight-suspended"} {
				runs = append(runs, Run{Suite: "jobconform drills", Scenario: "upgrade-downgrade-upgrade: " + fl + " at step " + step, Controller: ctl, Version: path, Verdict: "PASS", Seconds: 70})
			}
		}
	}
	runs = append(runs, Run{Suite: "jobconform drills", Scenario: "keeps every field and every finished pod across each change", Verdict: "PASS", Seconds: 169})
	ms := matrices(runs)
	if len(ms) != 2 || ms[1].Suite != "jobconform drills — upgrade-downgrade-upgrade" {
		t.Fatalf("matrices: %+v", ms)
	}
	m := ms[1]
	wantCols := []string{"builtin @ " + path + " · step 0", "builtin @ " + path + " · step 1", "reference @ " + path + " · step 0", "reference @ " + path + " · step 1"}
	if !slices.Equal(m.Columns, wantCols) || len(m.Rows) != 2 || m.Rows[0].Scenario != "flight-sigterm" || m.Rows[0].Cells[3].Seconds != "70s" {
		t.Errorf("drill matrix: columns %q, rows %+v", m.Columns, m.Rows)
	}
}
