package oracle

import (
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobconform/jobconform/internal/timeline"
)

// A pod deleted moments after it ended, as the Job reached its end, is a
// race between its end and the sync that ended the Job: in a run with one,
// the pods the Job's end deleted are noise; a pod deleted long after its
// end, one deleted apart from the Job's end (a controller deleting finished
// pods), or one taken by the Job's deletion, is none.
func TestEndRace(t *testing.T) {
	// The pod ends 5 s in, is deleted after, and the Job reaches its end
	// (FailureTarget) jobEnd after the pod's end.
	withEnd := func(after, jobEnd time.Duration, jobDeleted bool) timeline.Timeline {
		tl := run("11111111", batchv1.JobTrackingFinalizer, func(j *batchv1.Job, _ []*corev1.Pod) { j.Status.Conditions = nil })
		running := tl[len(tl)-1].Job()
		p := tl[0].Pod().DeepCopy()
		end := tl[0].Time.Add(5 * time.Second)
		p.Status.Phase = corev1.PodFailed
		tl = append(tl, timeline.Entry{Seq: len(tl), Time: end, Type: timeline.Modified, Kind: "Pod", Name: p.Name, Object: p})
		if jobDeleted {
			j := running.DeepCopy()
			j.DeletionTimestamp = &metav1.Time{Time: end}
			tl = append(tl, timeline.Entry{Seq: len(tl), Time: end, Type: timeline.Modified, Kind: "Job", Name: "job", Object: j})
		}
		q := p.DeepCopy()
		q.DeletionTimestamp = &metav1.Time{Time: end.Add(after)}
		tl = append(tl, timeline.Entry{Seq: len(tl), Time: end.Add(after), Type: timeline.Modified, Kind: "Pod", Name: q.Name, Object: q})
		j := running.DeepCopy()
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded"}}
		return append(tl, timeline.Entry{Seq: len(tl), Time: end.Add(jobEnd), Type: timeline.Modified, Kind: "Job", Name: "job", Object: j})
	}
	for _, tc := range []struct {
		name string
		tl   timeline.Timeline
		race bool
	}{
		{"deleted 0.5s after its end, as the Job ended", withEnd(500*time.Millisecond, 700*time.Millisecond, false), true},
		{"deleted 5s after its end", withEnd(5*time.Second, 5*time.Second, false), false},
		{"deleted 0.5s after its end, the Job ending 10s later", withEnd(500*time.Millisecond, 10*time.Second, false), false},
		{"taken by the Job's deletion", withEnd(500*time.Millisecond, 700*time.Millisecond, true), false},
	} {
		o := Observe(tc.tl, "job", batchv1.JobTrackingFinalizer)
		if (o.EndRace != "") != tc.race {
			t.Errorf("%s: end race %q, want %v", tc.name, o.EndRace, tc.race)
		}
	}
	// In a comparison, the race excuses the deleted pods only.
	raced := Observe(withEnd(500*time.Millisecond, 700*time.Millisecond, false), "job", batchv1.JobTrackingFinalizer)
	raced.Events["Normal/SuccessfulDelete"], raced.Requests = 1, []string{"delete pods {}"}
	calm := Observe(run("22222222", batchv1.JobTrackingFinalizer, nil), "job", batchv1.JobTrackingFinalizer)
	calm.Requests = []string{}
	calm.Final["failed"] = "3"
	n := 0
	for _, d := range Compare(calm, raced, nil) {
		excused := strings.Contains(d.Allowed, "raced with their ends")
		if excused {
			n++
		}
		if excused != followsPods(d.Field, calm, raced) {
			t.Errorf("%s: allowed %q", d.Field, d.Allowed)
		}
		if d.Field == "status.failed" && d.Allowed != "" {
			t.Errorf("status.failed excused by the race: %q", d.Allowed)
		}
	}
	if n < 3 { // the event, the delete request, the pod's later state
		t.Errorf("%d differences excused by the race, want 3", n)
	}
	// Against a built-in that ran twice, calm both times, the controller's
	// own race excuses nothing (issue #70: learned from the built-in only).
	twice := Learn(calm, calm)
	for _, d := range Compare(twice, raced, nil) {
		if strings.Contains(d.Allowed, "raced") {
			t.Errorf("%s excused by the other controller's own race: %q", d.Field, d.Allowed)
		}
	}
	// The built-in's own race, in either of its runs, still excuses them.
	if ds := Failing(Compare(Learn(calm, raced), raced, nil)); slices.ContainsFunc(ds, func(d Difference) bool { return followsPods(d.Field, calm, raced) }) {
		t.Errorf("the built-in's own end race did not excuse the deletions: %v", ds)
	}
}

// Noise on how many pods were created excuses the deletions that follow
// from it only for a controller that created a number among the built-in's.
func TestCreatedNoiseBounded(t *testing.T) {
	withPods := func(n int) *Observation {
		o := &Observation{Final: map[string]string{}, Pods: map[string]int{"shape": n}, Events: map[string]int{"Normal/SuccessfulDelete": n - 1}}
		return o
	}
	builtin := Learn(withPods(2), withPods(3))
	for _, tc := range []struct {
		pods    int
		excused bool
	}{{3, true}, {4, false}} {
		for _, d := range Compare(builtin, withPods(tc.pods), nil) {
			if d.Field == "events.Normal/SuccessfulDelete" && (d.Allowed != "") != tc.excused {
				t.Errorf("%d pods against the built-in's 2 and 3: the deletes' event allowed %q, want excused %v", tc.pods, d.Allowed, tc.excused)
			}
		}
	}
}
