package runner

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/jobconform/jobconform/chaos"
	"github.com/jobconform/jobconform/internal/pods"
	"github.com/jobconform/jobconform/internal/starvation"
	"github.com/jobconform/jobconform/internal/timeline"
	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/scenarios/invariants"
)

func TestNamespacePrefixIsADNSLabel(t *testing.T) {
	for _, name := range []string{"builtin", "example.com/ext", "Kueue.X-K8s.io/MultiKueue", strings.Repeat("x", 100)} {
		p := namespacePrefix(name)
		// GenerateName appends "-" and 5 characters.
		if errs := validation.IsDNS1123Label(p + "-abcde"); len(errs) > 0 {
			t.Errorf("%q → %q: %v", name, p, errs)
		}
	}
}

func TestBuildJob(t *testing.T) {
	s, err := scenarios.Parse([]byte(`
name: x
features: [managedBy]
foreignManagedBy: true
job: {parallelism: 2, completions: 2}
pods: {run: 1s}
steps: [{await: {empty: true}}]
`))
	if err != nil {
		t.Fatal(err)
	}
	j, err := buildJob(s, Reference, pods.Target{})
	if err != nil {
		t.Fatal(err)
	}
	if *j.Spec.ManagedBy != AbsentManager || j.Spec.Template.Spec.RestartPolicy != "Never" || len(j.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("job %+v", j.Spec)
	}
}

func TestGateOffSpans(t *testing.T) {
	at := func(s int) time.Time { return time.Date(2026, 1, 1, 0, 0, s, 0, time.UTC) }
	flip := func(start, end int, gates map[string]bool) chaos.Record {
		return chaos.Record{Start: at(start), Time: at(end), Action: chaos.Action{FeatureGates: gates}}
	}
	const g = "JobPodReplacementPolicy"
	spans := gateOffSpans([]chaos.Record{
		flip(10, 12, map[string]bool{g: false}),
		{Start: at(15), Time: at(15), Action: chaos.Action{ControllerRestart: &chaos.Restart{}}},
		flip(20, 22, map[string]bool{g: true}),
		flip(30, 31, map[string]bool{g: false}),
	}, g)
	want := []timeline.Span{{From: at(10), To: at(22)}, {From: at(30)}}
	if !reflect.DeepEqual(spans, want) {
		t.Fatalf("spans %v, want %v", spans, want)
	}
	// Back to the defaults (an empty map) ends a span too.
	spans = gateOffSpans([]chaos.Record{flip(1, 2, map[string]bool{g: false}), flip(5, 6, map[string]bool{})}, g)
	if len(spans) != 1 || !spans[0].To.Equal(at(6)) {
		t.Fatalf("reset to defaults: %v", spans)
	}
}

// A drill's change that ended just before a flight started still counts for
// it (its controller may lag); one long over does not.
func TestDisruptionsSince(t *testing.T) {
	start := time.Now()
	rec := func(end time.Duration, log string) chaos.Record {
		return chaos.Record{Start: start.Add(end - 2*time.Second), Time: start.Add(end), Log: log}
	}
	apiserver := func(end time.Duration, log string) chaos.Record {
		r := rec(end, log)
		r.Action.APIServerRestart = &chaos.Restart{}
		return r
	}
	all := []chaos.Record{rec(-2*invariants.RestartGrace, "long over"), apiserver(-3*invariants.RestartGrace, "apiserver long over"),
		apiserver(-3*invariants.RestartGrace/2, "apiserver, watches maybe still away"), rec(-3*time.Second, "just before"), rec(10*time.Second, "during")}
	got := disruptionsSince(Options{Disruptions: func() []chaos.Record { return all }}, start)
	var logs []string
	for _, d := range got {
		logs = append(logs, d.Log)
	}
	if want := []string{"apiserver, watches maybe still away", "just before", "during"}; !reflect.DeepEqual(logs, want) {
		t.Errorf("disruptionsSince = %v, want %v", logs, want)
	}
	if disruptionsSince(Options{}, start) != nil {
		t.Error("no Disruptions: want none")
	}
}

// A restart counts from its start and from its end.
func TestRestartBounds(t *testing.T) {
	t0 := time.Now()
	long := chaos.Record{Start: t0, Time: t0.Add(12 * time.Second)}
	if got := restartBounds(long); !reflect.DeepEqual(got, []time.Time{t0, t0.Add(12 * time.Second)}) {
		t.Errorf("restartBounds = %v, want its start and its end", got)
	}
	if got := restartBounds(chaos.Record{Start: t0}); !reflect.DeepEqual(got, []time.Time{t0}) {
		t.Errorf("restartBounds of an action without an end = %v, want its start", got)
	}
	// An apiserver's restart holds the watches back twice as long.
	api := long
	api.Action.APIServerRestart = &chaos.Restart{}
	if got, want := restartBounds(api), []time.Time{t0, t0.Add(12 * time.Second), t0.Add(12*time.Second + invariants.RestartGrace)}; !reflect.DeepEqual(got, want) {
		t.Errorf("restartBounds of an apiserver restart = %v, want %v", got, want)
	}
}

// A controller stopped for longer than RestartGrace is disturbed all along:
// restartTimes leaves no stretch of RestartGrace without a bound in it.
func TestRestartTimesCoverAStoppedController(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	start := t0.Add(3 * invariants.RestartGrace)
	got := restartTimes([]chaos.Record{
		{Start: t0, Time: t0, Action: chaos.Action{ControllerStop: &chaos.Stop{}}},
		{Start: start, Time: start.Add(2 * time.Second), Action: chaos.Action{ControllerStart: &chaos.Start{}}},
	})
	if !got[0].Equal(t0) || !got[len(got)-1].Equal(start.Add(2*time.Second)) {
		t.Fatalf("restartTimes = %v, want from the stop to the start's end", got)
	}
	for i := 1; i < len(got); i++ {
		if gap := got[i].Sub(got[i-1]); gap > invariants.RestartGrace {
			t.Fatalf("restartTimes = %v: %s without a bound", got, gap)
		}
	}
}

// What a dispatched Job cannot promise says why, by the scenario's steps;
// the rest run across clusters.
func TestNotAcrossClusters(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		c    Controller
		want string
	}{
		{"steps: [{await: {active: 1}}, {act: {kind: deletePod}}]", Dispatcher, ""},
		{"steps: [{await: {active: 1}}, {act: {kind: suspend}}]", Dispatcher, "copies a Job to its worker once"},
		{"steps: [{act: {kind: scale, parallelism: 2}}]", Dispatcher, "copies a Job to its worker once"},
		{"steps: [{act: {kind: deleteJob, propagation: Foreground}}]", Dispatcher, "in the background whatever the policy"},
		{"foreignManagedBy: true\nsteps: [{await: {active: 0}}]", Dispatcher, "whose manager does not run"},
		// MultiKueue: Kueue's contract, not the reference dispatcher's.
		{"steps: [{await: {active: 1}}, {act: {kind: suspend}}]", MultiKueue, "Kueue owns spec.suspend"},
		{"steps: [{act: {kind: scale, parallelism: 2}}]", MultiKueue, "ElasticJobsViaWorkloadSlices"},
		{"steps: [{act: {kind: scale, parallelism: 3}}]", MultiKueue, ""}, // job: parallelism 0 (below)
		{"steps: [{act: {kind: deleteJob, propagation: Orphan}}]", MultiKueue, ""},
		{"steps: [{await: {active: 1}}, {act: {kind: deletePod}}]", MultiKueue, ""},
		{"foreignManagedBy: true\nsteps: [{await: {active: 0}}]", MultiKueue, "whose manager does not run"},
	} {
		job := "{parallelism: 2, completions: 2}"
		if strings.Contains(tc.yaml, "parallelism: 3") {
			job = "{parallelism: 0, completions: 2}" // no pod runs before it is resized
		}
		s, err := scenarios.Parse([]byte("name: x\nfeatures: [managedBy]\ndescription: d\njob: " + job + "\npods: {run: 10s}\n" + tc.yaml))
		if err != nil {
			t.Fatalf("%s: %v", tc.yaml, err)
		}
		if got := NotAcrossClusters(s, tc.c); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s, %s: %q, want %q", tc.c.Name, tc.yaml, got, tc.want)
		}
	}
}

// A timing verdict that failed while the starvation meter was red says so;
// a verdict that does not depend on time does not, nor does a timing one
// on a machine that was not starved (readings recorded on two cores: idle,
// and beside 32 spinning processes).
func TestStarvedTimingVerdictsSaySo(t *testing.T) {
	read := func(name string) starvation.Reading {
		b, err := os.ReadFile("../../../internal/starvation/testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		var s []starvation.Sample
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		return starvation.Summarize(s)
	}
	run := func(m starvation.Reading) *Result {
		return &Result{
			Steps: []StepResult{
				{Index: 1, What: "await active=2", Message: "not reached within 1m0s (last status: active=1, want 2)", TimedOut: true},
				{Index: 2, What: "act deletePod", Message: "no running pod to delete"},
			},
			Invariants: []invariants.Result{
				{Invariant: "replacement-timing", Violations: []invariants.Violation{{Invariant: "replacement-timing", Message: "pod b replaced a 31s after the Job's latest failure"}}},
				{Invariant: "counters-monotonic", Violations: []invariants.Violation{{Invariant: "counters-monotonic", Message: "succeeded went from 2 to 1"}}},
			},
			Starvation: m,
		}
	}
	if !invariants.IsLate("replacement-timing") || invariants.IsLate("counters-monotonic") {
		t.Fatal("replacement-timing is an upper bound in time, counters-monotonic is not")
	}
	got := run(read("starved-samples.json")).Failures()
	want := []bool{true, false, true, false} // the timeout and the late replacement
	if len(got) != len(want) {
		t.Fatalf("failures %q", got)
	}
	for i, f := range got {
		if says := strings.Contains(f, "the machine was starved during this run (run queue"); says != want[i] {
			t.Errorf("failure %q: says starved %v, want %v", f, says, want[i])
		}
	}
	for _, f := range run(read("idle-samples.json")).Failures() {
		if strings.Contains(f, "starved") {
			t.Errorf("idle machine, yet %q", f)
		}
	}
}

func TestStatusLag(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	pod := func(finished time.Time) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "u"}}
		if !finished.IsZero() {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(finished)}}}}
		}
		return p
	}
	tl := timeline.Timeline{
		{Time: t0, Kind: "Pod", Object: pod(time.Time{})},
		{Time: t0.Add(3 * time.Second), Kind: "Pod", Object: pod(t0.Add(time.Second))},      // seen 2s after its end
		{Time: t0.Add(9 * time.Second), Kind: "Pod", Object: pod(t0.Add(time.Second))},      // the same end again: not a lag
		{Time: t0.Add(10 * time.Second), Kind: "Pod", Object: pod(t0.Add(9 * time.Second))}, // its end written again: not a lag either
	}
	if got, rewritten := statusLag(tl); got != 2*time.Second || rewritten != 1 {
		t.Errorf("statusLag = %s, %d rewritten; want 2s, 1", got, rewritten)
	}
}
