package oracle

import (
	"strconv"
	"time"

	"github.com/jobconform/jobconform/internal/kube"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Timestamps (issue #56). Their values are timing; what each must equal is
// not, and is compared: a condition's lastProbeTime is written with its
// lastTransitionTime, a condition's
// lastTransitionTime moves when its status does, startTime is written
// before the first pod is created (syncJob; of a Job never suspended).
// completionTime is not related to Complete's lastTransitionTime here:
// upstream takes it from the finished condition made when the enacting sync
// began and stamps Complete with a later clock reading (seen a second apart
// on a 600-pod Job); the completion-time invariant bounds it. Each relation is stated as the run showed it and compared with the
// built-in's; a controller whose timestamps are stale, unset or another
// moment's differs where its values alone never could be compared.
// No relation reads the harness's clock: on a user's cluster the
// apiserver's may be another machine's.

// times follows the Job's versions, before its deletion was asked for.
type times struct {
	firstStart   *metav1.Time
	conds        map[batchv1.JobConditionType]seenCondition
	stale        map[batchv1.JobConditionType]int
	last         *batchv1.Job
	firstPodTime *metav1.Time
	// suspended: the Job was ever suspended. Upstream writes startTime
	// again at a resume after creating the resumed pods in the same sync
	// (syncJob: manageJob, then the Resumed branch's now), so the startTime
	// of a Job ever suspended may fall in a later second than its first
	// pod: timing (seen in a drill's flight-suspended, 2026-11-29).
	suspended bool
}

// seenCondition is a condition as last seen, and when its status was.
type seenCondition struct {
	batchv1.JobCondition
	at time.Time // the recording's time of the version that showed its status first
}

// staleAfter is how far apart (on the recording's clock) two versions
// showing a condition's status change must have arrived for an unchanged
// lastTransitionTime to be stale: timestamps have one-second resolution,
// so two writes within a second may rightly share one, and a version may
// arrive seconds late on a loaded machine.
const staleAfter = 5 * time.Second

func newTimes() *times {
	return &times{conds: map[batchv1.JobConditionType]seenCondition{}, stale: map[batchv1.JobConditionType]int{}}
}

// job takes the Job's next version, recorded at at.
func (t *times) job(j *batchv1.Job, at time.Time) {
	t.last = j
	t.suspended = t.suspended || ptr.Deref(j.Spec.Suspend, false) || kube.JobCondition(j.Status, batchv1.JobSuspended) != nil
	if s := j.Status.StartTime; s != nil && t.firstStart == nil {
		t.firstStart = s
	}
	for _, c := range j.Status.Conditions {
		prev, ok := t.conds[c.Type]
		switch {
		case !ok || prev.Status != c.Status:
			if ok && c.LastTransitionTime.Equal(&prev.LastTransitionTime) && at.Sub(prev.at) >= staleAfter {
				t.stale[c.Type]++
			}
			t.conds[c.Type] = seenCondition{c, at}
		default:
			prev.JobCondition = c
			t.conds[c.Type] = prev
		}
	}
}

// pod takes a pod of the Job, as first seen.
func (t *times) pod(p *corev1.Pod) {
	if c := p.CreationTimestamp; !c.IsZero() && (t.firstPodTime == nil || c.Before(t.firstPodTime)) {
		t.firstPodTime = &c
	}
}

// relations are what the run's timestamps equal, by name.
func (t *times) relations() map[string]string {
	out := map[string]string{}
	if t.last == nil {
		return out
	}
	s := t.last.Status
	for _, c := range s.Conditions {
		rel := "other than its lastTransitionTime"
		switch {
		case c.LastProbeTime.IsZero():
			rel = "<unset>"
		case c.LastProbeTime.Equal(&c.LastTransitionTime):
			rel = "its lastTransitionTime"
		}
		out[string(c.Type)+".lastProbeTime"] = rel
		if c.LastTransitionTime.IsZero() {
			out[string(c.Type)+".lastTransitionTime"] = "<unset>"
		}
	}
	for ty, n := range t.stale {
		// Only a stale one is said: a change within staleAfter proves nothing.
		out[string(ty)+".lastTransitionTime on a change of status"] = "kept " + strconv.Itoa(n) + " time(s)"
	}
	if t.firstStart != nil && t.firstPodTime != nil && !t.suspended {
		rel := "not after the first pod's creation"
		if t.firstStart.Time.Truncate(time.Second).After(t.firstPodTime.Time) {
			rel = "after the first pod's creation"
		}
		out["startTime"] = rel
	}
	return out
}
