package oracle

import (
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/timeline"
)

// timed is a recording of an Indexed Job of one index whose first pod
// fails at 5 s, replaced at replaceAt; a second pod (index 1) ends at
// otherEnd; the Job then suspended at 40 s and resumed at 50 s, index 0's
// third pod at resumedAt, succeeding 0.2 s later; Complete at completeAt.
func timed(uid string, replaceAt, otherEnd, resumedAt, completeAt float64) timeline.Timeline {
	zero := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return zero.Add(time.Duration(s * float64(time.Second))) }
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "job", UID: types.UID(uid)}, Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](2)}}
	var t timeline.Timeline
	add := func(s float64, typ timeline.EventType, obj interface{ GetName() string }) {
		e := timeline.Entry{Seq: len(t), Time: at(s), Type: typ, Name: obj.GetName()}
		switch o := obj.(type) {
		case *batchv1.Job:
			e.Kind, e.Object = "Job", o.DeepCopy()
		case *corev1.Pod:
			e.Kind, e.Object = "Pod", o.DeepCopy()
		}
		t = append(t, e)
	}
	pod := func(name, index string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(uid + name),
			Annotations:     map[string]string{batchv1.JobCompletionIndexAnnotation: index},
			OwnerReferences: []metav1.OwnerReference{{Kind: "Job", Name: "job", UID: types.UID(uid), Controller: ptr.To(true)}}}}
	}
	add(0, timeline.Added, job)
	first, other := pod("a", "0"), pod("b", "1")
	add(0.5, timeline.Added, first)
	add(0.5, timeline.Added, other)
	first.Status.Phase = corev1.PodFailed
	add(5, timeline.Modified, first)
	add(replaceAt, timeline.Added, pod("c", "0"))
	other.Status.Phase = corev1.PodSucceeded
	add(otherEnd, timeline.Modified, other)
	job.Spec.Suspend = ptr.To(true)
	add(40, timeline.Modified, job)
	job.Spec.Suspend = ptr.To(false)
	add(50, timeline.Modified, job)
	last := pod("d", "0")
	add(resumedAt, timeline.Added, last)
	last.Status.Phase = corev1.PodSucceeded
	add(resumedAt+0.2, timeline.Modified, last)
	job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached"}}
	add(completeAt, timeline.Modified, job)
	return t
}

// Each effect is timed from its cause in the built-in's run and compared
// within the built-in's two runs widened by Slack and a quarter: a
// replacement late past that, pods late after a resume, a terminal
// condition late differ; a cause that falls on the other side of its
// effect in another run (index 1 ending around the replacement) does not.
func TestDelaysCompared(t *testing.T) {
	twice := Learn(Observe(timed("b1", 15, 14.9, 50.5, 51), "job", ""), Observe(timed("b2", 15.4, 14.8, 50.8, 51.3), "job", ""))
	if len(twice.Clocks) != 2 {
		t.Fatalf("the built-in's two clocks not kept: %v", twice.Clocks)
	}
	for _, tc := range []struct {
		name string
		run  timeline.Timeline
		want []string // fields that differ
	}{
		{"alike", timed("o", 15.2, 14.9, 50.6, 51.1), nil},
		{"within-slack", timed("o", 20, 15.3, 54, 55), nil},
		{"replacement-late", timed("o", 30, 14.9, 50.6, 51.1), []string{"delay job 1 index 0 pod 2 created"}},
		{"replacement-early", timed("o", 5.2, 14.9, 50.6, 51.1), []string{"delay job 1 index 0 pod 2 created"}},
		{"late-after-resume", timed("o", 15.2, 14.9, 62, 62.8), []string{"delay job 1 index 0 pod 3 created"}},
		{"complete-late", timed("o", 15.2, 14.9, 50.6, 60), []string{"delay job 1 condition Complete=True/CompletionsReached"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, d := range Failing(CompareWith(twice, Observe(tc.run, "job", ""), nil, nil)) {
				got = append(got, d.Field)
			}
			if strings.Join(got, "; ") != strings.Join(tc.want, "; ") {
				t.Fatalf("differences %v, want %v", got, tc.want)
			}
		})
	}
	// Against one run of the built-in, timing is not compared.
	once := Observe(timed("b1", 15, 14.9, 50.5, 51), "job", "")
	if ds := CompareWith(once, Observe(timed("o", 30, 14.9, 62, 63), "job", ""), nil, nil); len(ds) != 0 {
		t.Fatalf("timing compared against one run: %v", ds)
	}
}

// Whether a run's delays were compared is said, with why not: a verdict
// never reads as timed when it was not (issue #56). A late run differs
// exactly where WhyUntimed says it is timed.
func TestWhyUntimed(t *testing.T) {
	twice := func() *Observation {
		return Learn(Observe(timed("b1", 15, 14.9, 50.5, 51), "job", ""), Observe(timed("b2", 15.4, 14.8, 50.8, 51.3), "job", ""))
	}
	late := func() *Observation { return Observe(timed("o", 30, 14.9, 50.6, 51.1), "job", "") }
	for _, tc := range []struct {
		name           string
		builtin, other func() *Observation
		want           string
	}{
		{"timed", twice, late, ""},
		{"once", func() *Observation { return Observe(timed("b1", 15, 14.9, 50.5, 51), "job", "") }, late, "the built-in ran once"},
		{"disrupted", twice, func() *Observation {
			o := late()
			o.Clocks, o.Untimed = nil, "a disruption"
			return o
		}, "a disruption"},
		{"builtin-gap", func() *Observation {
			o := twice()
			o.Clocks, o.Untimed = nil, "the recording had a gap"
			return o
		}, late, "in the built-in's run, the recording had a gap"},
		{"kept-before-clocks", func() *Observation {
			o := twice()
			o.Clocks = nil
			return o
		}, late, "no clock kept"},
		{"dispatched", twice, func() *Observation {
			o := late()
			o.Scope = "status"
			return o
		}, "a dispatched Job"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, o := tc.builtin(), tc.other()
			why := WhyUntimed(b, o)
			if !strings.HasPrefix(why, tc.want) || (tc.want == "") != (why == "") {
				t.Fatalf("WhyUntimed %q, want %q", why, tc.want)
			}
			timedDiffers := slices.ContainsFunc(CompareWith(b, o, nil, nil), func(d Difference) bool { return strings.HasPrefix(d.Field, "delay ") })
			if timedDiffers != (why == "") {
				t.Fatalf("delays compared %v, but WhyUntimed %q", timedDiffers, why)
			}
		})
	}
}

// A delay is said with its cause, and what the built-in's runs showed.
func TestDelaySaid(t *testing.T) {
	twice := Learn(Observe(timed("b1", 15, 14.9, 50.5, 51), "job", ""), Observe(timed("b2", 15.4, 14.8, 50.8, 51.3), "job", ""))
	ds := Failing(CompareWith(twice, Observe(timed("o", 15.2, 14.9, 62, 62.8), "job", ""), nil, nil))
	if len(ds) != 1 || ds[0].BuiltIn != "0.5 s, 0.8 s after job 1 change 3" || ds[0].Other != "12.0 s after job 1 change 3" {
		t.Fatalf("got %v", ds)
	}
}

// The machine starved between an effect and its cause: the effect is not
// timed. A run disrupted or with a gap is not timed at all.
func TestStarvedNotTimed(t *testing.T) {
	o := Observe(timed("o", 30, 14.9, 62, 63), "job", "")
	zero := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	n := o.Starved(func(from, to time.Time) string {
		if !from.After(zero.Add(20*time.Second)) && to.After(zero.Add(20*time.Second)) {
			return "starved at 20 s"
		}
		return ""
	})
	if _, ok := o.Clocks[0]["job 1 index 0 pod 2 created"]; n != 1 || ok {
		t.Fatalf("dropped %d, want the replacement at 30 s (after 14.9 s): %v", n, o.Clocks[0])
	}
	gapped := ObserveWith(timed("o", 30, 14.9, 62, 63), "job", "", []timeline.Span{{}})
	if gapped.Clocks != nil || gapped.Untimed == "" {
		t.Fatalf("a recording with a gap timed: %v %q", gapped.Clocks, gapped.Untimed)
	}
}

// A cause is named by its order, not its pod: which of two pods made
// together a person deletes differs from run to run (explore-7-94: the
// built-in's two runs deleted its first and its third pod), and a
// replacement timed from "the first pod's end" would be 1 s after a success
// in one run and 10 s after the deletion in another.
func TestCauseNamedByOrder(t *testing.T) {
	work := func(uid string, deleteFirst bool) timeline.Timeline {
		zero := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
		at := func(s float64) time.Time { return zero.Add(time.Duration(s * float64(time.Second))) }
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "job", UID: types.UID(uid)}}
		pod := func(name string) *corev1.Pod {
			return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(uid + name),
				OwnerReferences: []metav1.OwnerReference{{Kind: "Job", Name: "job", UID: types.UID(uid), Controller: ptr.To(true)}}}}
		}
		t := timeline.Timeline{{Time: at(0), Type: timeline.Added, Kind: "Job", Name: "job", Object: job}}
		a, b := pod("a"), pod("b")
		t = append(t, timeline.Entry{Time: at(0), Type: timeline.Added, Kind: "Pod", Name: "a", Object: a.DeepCopy()},
			timeline.Entry{Time: at(0), Type: timeline.Added, Kind: "Pod", Name: "b", Object: b.DeepCopy()})
		gone, stays := a, b
		if !deleteFirst {
			gone, stays = b, a
		}
		t = append(t, timeline.Entry{Time: at(1), Type: timeline.Deleted, Kind: "Pod", Name: gone.Name, Object: gone})
		stays.Status.Phase = corev1.PodSucceeded
		t = append(t, timeline.Entry{Time: at(10), Type: timeline.Modified, Kind: "Pod", Name: stays.Name, Object: stays},
			timeline.Entry{Time: at(11), Type: timeline.Added, Kind: "Pod", Name: "c", Object: pod("c")})
		return t
	}
	twice := Learn(Observe(work("b1", true), "job", ""), Observe(work("b2", true), "job", ""))
	if ds := CompareWith(twice, Observe(work("o", false), "job", ""), nil, nil); len(ds) != 0 {
		t.Fatalf("another pod deleted, the same order of things: %v", ds)
	}
}
