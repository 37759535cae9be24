// What deleting a Job promises of its pods.

package invariants

import (
	"slices"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobconform/jobconform/internal/timeline"
)

// DeletionGrace is how long after a Job's removal its controller may take to
// let its pods go: a sync of a Job it no longer has (the pods' own events
// requeue it) or of each orphaned pod.
var DeletionGrace = 20 * time.Second

// ReleasedOnDeletion: once the Job is gone, whatever propagation removed it,
// no pod keeps the controller's tracking finalizer — the pods the garbage
// collector deletes would otherwise stay Terminating for ever, and orphaned
// ones could never be deleted without a manual patch. Upstream removes it
// from the pods of a deleted Job and from orphans (pkg/controller/job
// syncOrphanPod, v1.26 on). Judged at the recording's end, when it comes at
// least DeletionGrace after the removal, outside restarts.
var ReleasedOnDeletion = Invariant{
	Name:        "released-on-deletion",
	Late:        true,
	ClockOnly:   "a deleted Job has no status to write and gets no pods; each orphan is released by a sync of its own, queued by its own event, so one pod released proves nothing of another",
	Description: "once the Job is deleted, no pod keeps the controller's tracking finalizer (within 20s; orphans included)",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		if ctx.Finalizer == "" {
			return nil
		}
		var gone *timeline.Entry
		last := map[types.UID]timeline.Entry{}
		for i, e := range t {
			switch {
			case e.Kind == "Job" && e.Name == ctx.Job && e.Type == timeline.Deleted:
				gone = &t[i]
			case e.Kind == "Pod":
				last[e.Pod().UID] = e
			}
		}
		end := recordingEnd(ctx, t)
		if gone == nil || end.Sub(gone.Time) < DeletionGrace || disturbedBetween(ctx, gone.Time, end) {
			return nil
		}
		var out []Violation
		for _, e := range last {
			if p := e.Pod(); e.Type != timeline.Deleted && slices.Contains(p.Finalizers, ctx.Finalizer) {
				out = append(out, violation("released-on-deletion", e, "pod %s still carries the tracking finalizer %s %s after its Job was deleted (%s, deletion %s)",
					p.Name, ctx.Finalizer, end.Sub(gone.Time).Round(time.Second), p.Status.Phase, deletionState(p.DeletionTimestamp)))
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
		return out
	},
}

func deletionState(ts *metav1.Time) string {
	if ts == nil {
		return "not asked"
	}
	return "asked"
}

// ForegroundWaitsForPods: a Job deleted with propagationPolicy Foreground is
// removed only after every pod it controlled is gone. The garbage collector
// waits only for dependents whose ownerReference has blockOwnerDeletion: a
// controller that leaves it out lets the Job vanish with its pods still
// running. Checked in etcd revision order.
var ForegroundWaitsForPods = Invariant{
	Name:        "foreground-waits-for-pods",
	Description: "a Job deleted in the foreground is removed only after all its pods are gone",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		var out []Violation
		foreground := false
		replay(ctx, t, func(e timeline.Entry, before, _ *world) {
			if e.Kind != "Job" {
				return
			}
			if slices.Contains(e.Job().Finalizers, metav1.FinalizerDeleteDependents) {
				foreground = true
			}
			if e.Type != timeline.Deleted || !foreground {
				return
			}
			for _, p := range before.podsOf(e.Job().UID) {
				out = append(out, violation("foreground-waits-for-pods", e, "the Job was removed by a foreground deletion while its pod %s still existed (%s)", p.Name, p.Status.Phase))
			}
		})
		return out
	},
}
