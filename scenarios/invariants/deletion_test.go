package invariants

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobconform/jobconform/internal/timeline"
)

// jobGone records the Job's removal.
func jobGone(b *builder) *builder {
	b.add("Job", timeline.Deleted, b.job.DeepCopy())
	return b
}

func TestReleasedOnDeletion(t *testing.T) {
	ctx := Context{Job: "j", Finalizer: fin}
	// The pods let go after the removal: kept.
	ok := jobGone(newBuilder().pod("a", running)).pod("a", unfinalized)
	ok.wait(DeletionGrace)
	ok.pod("a", deleting)
	expectOK(t, ReleasedOnDeletion, ctx, ok)
	// A pod still holding the finalizer 20s after the Job went: caught.
	kept := jobGone(newBuilder().pod("a", running)).pod("a", deleting)
	kept.wait(DeletionGrace)
	kept.status(func(*batchv1.JobStatus) {}) // anything later, so that the recording ends past the grace
	expectViolation(t, ReleasedOnDeletion, Context{Job: "j", Finalizer: fin}, kept, "still carries the tracking finalizer")
	// The same, but the recording ended before the grace: no verdict yet.
	early := jobGone(newBuilder().pod("a", running)).pod("a", deleting)
	expectOK(t, ReleasedOnDeletion, ctx, early)
	// A restart between the removal and the end: no verdict.
	restarted := Context{Job: "j", Finalizer: fin, Restarts: []time.Time{kept.now.Add(-time.Second)}}
	expectOK(t, ReleasedOnDeletion, restarted, kept)
	// The Job not deleted: not this check's.
	expectOK(t, ReleasedOnDeletion, ctx, newBuilder().pod("a", running))
}

func TestForegroundWaitsForPods(t *testing.T) {
	foreground := func(b *builder) *builder {
		b.job.Finalizers = []string{metav1.FinalizerDeleteDependents}
		b.job.DeletionTimestamp = &metav1.Time{Time: b.now}
		return b.status(func(*batchv1.JobStatus) {})
	}
	ok := foreground(newBuilder().pod("a", running)).pod("a", deleting)
	ok.podGone("a")
	expectOK(t, ForegroundWaitsForPods, Context{Job: "j"}, jobGone(ok))
	early := foreground(newBuilder().pod("a", running)).pod("a", deleting)
	expectViolation(t, ForegroundWaitsForPods, Context{Job: "j"}, jobGone(early), "while its pod a still existed")
	// A background deletion owes no such order.
	expectOK(t, ForegroundWaitsForPods, Context{Job: "j"}, jobGone(newBuilder().pod("a", running)))
}

// A Job being deleted, or gone, owes no settled status: its pods go while
// its last status still counts them.
func TestDeletedJobOwesNoSettledCounts(t *testing.T) {
	active := func(n int32) func(*batchv1.JobStatus) { return func(s *batchv1.JobStatus) { s.Active = n } }
	deleted := newBuilder().pod("a", running).status(active(1))
	deleted.job.DeletionTimestamp = &metav1.Time{Time: deleted.now}
	deleted.status(func(*batchv1.JobStatus) {})
	deleted.pod("a", deleting)
	deleted.wait(countSettleWindow)
	expectOK(t, ActiveSettles, Context{End: deleted.now}, deleted)
	gone := newBuilder().pod("a", running).status(active(1))
	jobGone(gone).pod("a", deleting)
	gone.wait(countSettleWindow)
	expectOK(t, ActiveSettles, Context{End: gone.now}, gone)
	// The same pod going while the Job lives on is a verdict, as before.
	live := newBuilder().pod("a", running).status(active(1))
	live.pod("a", deleting)
	live.wait(countSettleWindow)
	expectViolation(t, ActiveSettles, Context{End: live.now}, live, "status.active=1 but 0 pods were active")
}
