package oracle

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobconform/jobconform/internal/timeline"
)

// RaceWindow is how soon after a pod ended a deletion of it still shows a
// sync that raced with that end: the controllers batch pod events for a
// second, then act on their cache.
const RaceWindow = 2 * time.Second

// endRace says whether, in a run's recording, the Job's end raced with its
// pods' ends: a pod deleted within RaceWindow after it had ended, and
// within RaceWindow of the Job's first terminal condition (FailureTarget,
// SuccessCriteriaMet, Failed, Complete) — the sync that ended the Job acted
// on a cache that had not yet seen the pod's end, and deleted it as active.
// Which pods a Job's end deletes, and so its SuccessfulDelete events, its
// delete requests and the pods' later states, then depend on which came
// first (followsPods). endAt is when the Job first showed a condition of
// its end (ends; zero: never). Measured: explore-1-13 under load, both controllers
// deleting 0, 1 or 2 pods already Failed. A run that deletes an ended pod
// at any other moment shows no race ("": a controller that deletes
// finished pods is not excused), nor do deletions after the Job's own.
func endRace(t timeline.Timeline, jobUIDs map[string]bool, cuts map[string]time.Time, endAt time.Time) string {
	ended := map[types.UID]time.Time{}
	deleting := map[types.UID]bool{}
	race := ""
	for _, e := range t {
		p := e.Pod()
		if p == nil || !ownedBy(p, jobUIDs) || deleting[p.UID] {
			continue
		}
		if cut, ok := cuts[string(metav1.GetControllerOf(p).UID)]; ok && !e.Time.Before(cut) {
			continue // the Job's deletion takes its pods with it
		}
		if _, ok := ended[p.UID]; !ok && (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed) {
			ended[p.UID] = e.Time
		}
		if p.DeletionTimestamp == nil && e.Type != timeline.Deleted {
			continue
		}
		deleting[p.UID] = true
		at, ok := ended[p.UID]
		if !ok {
			continue // deleted while it ran
		}
		if e.Time.Sub(at) > RaceWindow || endAt.IsZero() || e.Time.Sub(endAt).Abs() > RaceWindow {
			return "" // an ended pod deleted apart from the Job's end: no race
		}
		race = fmt.Sprintf("a pod was deleted %.1fs after it had ended (%s), as the Job reached its end: a sync on a cache that had not seen the pod's end", e.Time.Sub(at).Seconds(), p.Status.Phase)
	}
	return race
}

// ends tells whether c is a condition of the Job's end: FailureTarget,
// SuccessCriteriaMet, Failed or Complete, true.
func ends(c batchv1.JobCondition) bool {
	switch c.Type {
	case batchv1.JobFailureTarget, batchv1.JobSuccessCriteriaMet, batchv1.JobFailed, batchv1.JobComplete:
		return c.Status == corev1.ConditionTrue
	}
	return false
}
