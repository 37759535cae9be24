package oracle

import (
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobconform/jobconform/internal/timeline"
)

// Timestamps (issue #56): compared by what they equal, not by their values.
func TestTimestampsCompared(t *testing.T) {
	at := metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))
	stamped := func(uid string, edit func(*batchv1.Job)) *Observation {
		return Observe(run(uid, "f", func(j *batchv1.Job, ps []*corev1.Pod) {
			for _, p := range ps {
				p.CreationTimestamp = metav1.NewTime(at.Add(time.Second))
			}
			j.Status.StartTime = &at
			for i := range j.Status.Conditions {
				j.Status.Conditions[i].LastTransitionTime = metav1.NewTime(at.Add(time.Duration(i+5) * time.Second))
				j.Status.Conditions[i].LastProbeTime = j.Status.Conditions[i].LastTransitionTime
			}
			j.Status.CompletionTime = &j.Status.Conditions[1].LastTransitionTime
			if edit != nil {
				edit(j)
			}
		}), "job", "f")
	}
	builtin := stamped("11111111", nil)
	want := map[string]string{"Complete.lastProbeTime": "its lastTransitionTime",
		"SuccessCriteriaMet.lastProbeTime": "its lastTransitionTime", "startTime": "not after the first pod's creation"}
	if _, ok := builtin.Times["completionTime"]; ok {
		t.Errorf("completionTime related to Complete's lastTransitionTime: upstream's differ by the enacting sync's work")
	}
	for k, v := range want {
		if builtin.Times[k] != v {
			t.Errorf("times %s: %q, want %q (all: %v)", k, builtin.Times[k], v, builtin.Times)
		}
	}
	// Other values, the same relations: no difference.
	if ds := Compare(builtin, stamped("22222222", func(j *batchv1.Job) {
		earlier := metav1.NewTime(j.Status.StartTime.Add(-time.Hour))
		j.Status.StartTime = &earlier
	}), nil); len(ds) != 0 {
		t.Fatalf("other moments, the same relations: %v", ds)
	}
	cases := map[string]func(*batchv1.Job){
		"times.Complete.lastProbeTime": func(j *batchv1.Job) { j.Status.Conditions[1].LastProbeTime = metav1.Time{} },
		"times.startTime": func(j *batchv1.Job) {
			late := metav1.NewTime(at.Add(time.Minute))
			j.Status.StartTime = &late
		},
	}
	for field, edit := range cases {
		ds := Failing(Compare(builtin, stamped("33333333", edit), nil))
		if !slices.ContainsFunc(ds, func(d Difference) bool { return d.Field == field }) {
			t.Errorf("%s: want it among the differences, got %v", field, ds)
		}
	}
	// A lastTransitionTime kept across a change of status is stale once the
	// two versions arrived staleAfter apart; within it, it proves nothing
	// (one-second timestamps, late arrivals).
	resumed := func(after time.Duration, moved bool) *Observation {
		tl := run("44444444", "f", func(j *batchv1.Job, _ []*corev1.Pod) {
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue, LastTransitionTime: at}}
		})
		j := tl[len(tl)-1].Job().DeepCopy()
		j.Status.Conditions[0].Status = corev1.ConditionFalse
		if moved {
			j.Status.Conditions[0].LastTransitionTime = metav1.NewTime(at.Add(after))
		}
		tl = append(tl, timeline.Entry{Seq: len(tl), Time: tl[len(tl)-1].Time.Add(after), Type: timeline.Modified, Kind: "Job", Name: "job", Object: j})
		return Observe(tl, "job", "f")
	}
	const key = "Suspended.lastTransitionTime on a change of status"
	if o := resumed(time.Minute, false); o.Times[key] != "kept 1 time(s)" {
		t.Fatalf("a stale lastTransitionTime: %v", o.Times)
	}
	for _, o := range []*Observation{resumed(time.Minute, true), resumed(time.Second, false)} {
		if _, ok := o.Times[key]; ok {
			t.Fatalf("moved, or kept within %s: %v", staleAfter, o.Times)
		}
	}
}

// A Job ever suspended says nothing of its startTime against its first
// pod: upstream writes it again at a resume after the resumed pods are
// created (a drill's flight-suspended: the reference's fell a second
// after its first pod).
func TestStartTimeOfASuspendedJobNotRelated(t *testing.T) {
	at := metav1.NewTime(time.Now().Truncate(time.Second))
	o := Observe(run("11111111", "f", func(j *batchv1.Job, ps []*corev1.Pod) {
		for _, p := range ps {
			p.CreationTimestamp = at
		}
		later := metav1.NewTime(at.Add(time.Second))
		j.Status.StartTime = &later
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: batchv1.JobSuspended, Status: corev1.ConditionFalse, Reason: "JobResumed"})
	}), "job", "f")
	if rel, ok := o.Times["startTime"]; ok {
		t.Fatalf("a resumed Job's startTime related to its first pod: %q", rel)
	}
}
