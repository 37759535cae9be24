package invariants

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/timeline"
)

func uncountedFailed(uids ...types.UID) func(*batchv1.JobStatus) {
	return func(s *batchv1.JobStatus) {
		s.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Failed: uids}
	}
}

func TestFinalizerAfterRecord(t *testing.T) {
	ctx := Context{Finalizer: fin}
	// Record, remove, count: the protocol.
	ok := newBuilder().pod("a", running).pod("a", failed)
	ok.status(uncountedFailed("uid-a"))
	ok.pod("a", unfinalized)
	ok.status(func(s *batchv1.JobStatus) { s.UncountedTerminatedPods.Failed = nil; s.Failed = 1 })
	expectOK(t, FinalizerAfterRecord, ctx, ok)

	// Removed first, recorded after: caught.
	early := newBuilder().pod("a", running).pod("a", failed)
	early.pod("a", unfinalized)
	early.status(uncountedFailed("uid-a"))
	expectViolation(t, FinalizerAfterRecord, ctx, early, "pod a (Failed) lost its finalizer")

	// The same, seen in the relist after a broken watch (an apiserver
	// restart): the status that recorded the pod may be among the lost
	// states, so no verdict there — and one again outside the gap.
	relisted := newBuilder().pod("a", running).pod("a", failed)
	gapFrom := relisted.now
	relisted.wait(10 * time.Second)
	relisted.pod("a", unfinalized)
	relisted.status(func(s *batchv1.JobStatus) { s.Failed = 1 })
	gap := Context{Finalizer: fin, Gaps: []timeline.Span{{From: gapFrom, To: relisted.now.Add(time.Second)}}}
	expectOK(t, FinalizerAfterRecord, gap, relisted)
	gap.Gaps[0].To = gapFrom.Add(time.Second)
	expectViolation(t, FinalizerAfterRecord, gap, relisted, "pod a (Failed) lost its finalizer")

	// The removal that deletes the pod (it was being deleted) counts too.
	gone := newBuilder().pod("a", running).pod("a", deleting)
	gone.pod("a", failed)
	gone.add("Pod", "DELETED", func() *corev1.Pod { p := gone.pods["a"].DeepCopy(); p.Finalizers = nil; return p }())
	expectViolation(t, FinalizerAfterRecord, ctx, gone, "being deleted")

	// A failure an Ignore rule of the policy may match is let go unrecorded
	// (seen on kubelet nodes: an evicted pod under an Ignore rule on
	// DisruptionTarget, both controllers at v1.37.1).
	ignoring := func(j *batchv1.Job) {
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{Action: batchv1.PodFailurePolicyActionIgnore,
			OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}}}}
	}
	ignored := newBuilder(ignoring).pod("a", running).pod("a", deleting)
	ignored.pod("a", failed)
	ignored.pod("a", unfinalized)
	expectOK(t, FinalizerAfterRecord, ctx, ignored)
	// A policy without an Ignore rule counts every failure: caught as before.
	counting := func(j *batchv1.Job) {
		ignoring(j)
		j.Spec.PodFailurePolicy.Rules[0].Action = batchv1.PodFailurePolicyActionCount
	}
	counted := newBuilder(counting).pod("a", running).pod("a", failed)
	counted.pod("a", unfinalized)
	expectViolation(t, FinalizerAfterRecord, ctx, counted, "lost its finalizer")

	// Indexed: a succeeded pod is recorded by its index in completedIndexes.
	indexed := func(j *batchv1.Job) {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		j.Spec.Parallelism, j.Spec.Completions = ptr.To[int32](3), ptr.To[int32](3)
	}
	ix := newBuilder(indexed).pod("a", withIndex("2"))
	ix.pod("a", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })
	ix.status(func(s *batchv1.JobStatus) { s.CompletedIndexes = "0,2" })
	ix.pod("a", unfinalized)
	expectOK(t, FinalizerAfterRecord, ctx, ix)
	ixEarly := newBuilder(indexed).pod("a", withIndex("2"))
	ixEarly.pod("a", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })
	ixEarly.status(func(s *batchv1.JobStatus) { s.CompletedIndexes = "0-1" })
	ixEarly.pod("a", unfinalized)
	expectViolation(t, FinalizerAfterRecord, ctx, ixEarly, `completedIndexes "0-1"`)

	// Past completions (elastic scale-down) nothing is counted.
	scaled := newBuilder(indexed).pod("a", withIndex("5"))
	scaled.pod("a", deleting).pod("a", unfinalized)
	expectOK(t, FinalizerAfterRecord, ctx, scaled)

	// A pod still running when the Job met its success criteria is not counted.
	done := newBuilder().pod("a", running)
	done.status(func(s *batchv1.JobStatus) {
		s.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, "CompletionsReached")}
	})
	done.pod("a", deleting).pod("a", unfinalized)
	expectOK(t, FinalizerAfterRecord, ctx, done)
	// Nor when it ended Failed before its finalizer went (a loaded CI run, on
	// v1.37.1's built-in and the reference controller alike).
	late := newBuilder().pod("a", running)
	late.status(func(s *batchv1.JobStatus) {
		s.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, "SuccessPolicy")}
	})
	late.pod("a", deleting).pod("a", failed).pod("a", unfinalized)
	expectOK(t, FinalizerAfterRecord, ctx, late)
	// Nor one the sync that met them deleted, which ended and lost its
	// finalizer before that status landed (the ledger lets it go too).
	race := newBuilder().pod("a", running)
	race.status(func(s *batchv1.JobStatus) { s.Active = 1 })
	race.pod("a", deleting).pod("a", failed).pod("a", unfinalized)
	race.status(func(s *batchv1.JobStatus) {
		s.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, "SuccessPolicy")}
	})
	expectOK(t, FinalizerAfterRecord, ctx, race)
	// A pod that had failed before the success criteria were met still must be recorded.
	before := newBuilder().pod("a", running).pod("a", failed)
	before.status(func(s *batchv1.JobStatus) {
		s.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, "SuccessPolicy")}
	})
	before.pod("a", unfinalized)
	expectViolation(t, FinalizerAfterRecord, ctx, before, "pod a (Failed) lost its finalizer")
	// ...but once the Job failed, every pod counts as failed.
	fail := newBuilder().pod("a", running)
	fail.status(func(s *batchv1.JobStatus) {
		s.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, "BackoffLimitExceeded")}
	})
	fail.pod("a", unfinalized)
	expectViolation(t, FinalizerAfterRecord, ctx, fail, "pod a (Running) lost its finalizer")
}

func TestInIndexList(t *testing.T) {
	for _, c := range []struct {
		list string
		n    int
		want bool
	}{{"0,2-4", 3, true}, {"0,2-4", 1, false}, {"0,2-4", 4, true}, {"0,2-4", 5, false}, {"7", 7, true}, {"", 0, false}, {"1-2,9", 9, true},
		// Out of order, overlapping or malformed parts: asked of the whole list.
		{"4-6,0,5-9", 8, true}, {"4-6,0,5-9", 3, false}, {"0-1,2", 2, true}, {"x,3", 3, true}, {"5-3", 4, false}} {
		if got := inIndexList(c.list, c.n); got != c.want {
			t.Errorf("inIndexList(%q, %d) = %v, want %v", c.list, c.n, got, c.want)
		}
	}
}

func TestDisturbed(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ctx := Context{Restarts: []time.Time{t0}, Gaps: []timeline.Span{{From: t0.Add(time.Minute), To: t0.Add(70 * time.Second)}}}
	for _, c := range []struct {
		at   time.Duration
		want bool
	}{
		{-10 * time.Second, false}, {-time.Second, true}, {10 * time.Second, true}, {55 * time.Second, true}, {65 * time.Second, true}, {80 * time.Second, false},
	} {
		if got := disturbed(ctx, t0.Add(c.at)); got != c.want {
			t.Errorf("disturbed at %s = %t, want %t", c.at, got, c.want)
		}
	}
	if !disturbedBetween(ctx, t0.Add(-time.Second), t0.Add(5*time.Second)) || !disturbedBetween(ctx, t0.Add(30*time.Second), t0.Add(50*time.Second)) ||
		disturbedBetween(ctx, t0.Add(80*time.Second), t0.Add(90*time.Second)) {
		t.Error("disturbedBetween")
	}
}

// A dispatched Job: the worker's copy keeps the protocol, the dispatcher
// copied only the newest of its statuses to the manager's Job. The pod
// owner's promise is judged on the copy (not Manager), not on the manager's Job.
func TestPodPromisesJudgedOnTheCopy(t *testing.T) {
	b := newBuilder().pod("a", running).pod("a", failed)
	b.status(uncountedFailed("uid-a"))
	b.pod("a", unfinalized)
	b.status(func(s *batchv1.JobStatus) { s.UncountedTerminatedPods.Failed = nil; s.Failed = 1 })
	var dispatched timeline.Timeline
	for _, e := range b.tl {
		if e.Kind != "Job" {
			dispatched = append(dispatched, e)
			continue
		}
		c := e
		c.Name = "j@worker"
		dispatched = append(dispatched, c)
		if s := e.Job().Status; s.UncountedTerminatedPods == nil || len(s.UncountedTerminatedPods.Failed) == 0 {
			dispatched = append(dispatched, e) // the manager's Job: never the status that recorded the pod
		}
	}
	ctx := Context{Job: "j", Finalizer: fin, Copy: "j@worker"}
	if r := FinalizerAfterRecord.Evaluate(ctx, dispatched); len(r.Violations) != 0 {
		t.Errorf("judged on the copy: %v", r.Violations)
	}
	ctx.Copy = ""
	if r := FinalizerAfterRecord.Evaluate(ctx, dispatched); len(r.Violations) == 0 {
		t.Error("judged on the manager's Job, which never recorded the pod: no violation (the test no longer shows what judging on the copy changes)")
	}
}

// A pod that finishes while the controller deletes it as active (a
// suspension: upstream's deleteJobPods removes the finalizer, then deletes)
// need not be counted; a finished pod let go uncounted otherwise must.
func TestFinalizerAfterRecordDeletedAsActive(t *testing.T) {
	ctx := Context{Finalizer: fin}
	succeeded := func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }
	// finishedBefore: the pod's success before the suspension (negative:
	// after it); removedAfter: the removal after the success.
	run := func(suspend bool, finishedBefore, removedAfter time.Duration, deleted bool) *builder {
		b := newBuilder()
		b.pod("a", running)
		b.status(func(s *batchv1.JobStatus) { s.Active = 1 })
		if finishedBefore < 0 {
			b.job.Spec.Suspend = ptr.To(suspend)
			b.status(func(s *batchv1.JobStatus) {})
			b.wait(-finishedBefore)
			b.pod("a", succeeded)
		} else {
			b.pod("a", succeeded)
			b.wait(finishedBefore)
			b.job.Spec.Suspend = ptr.To(suspend)
			b.status(func(s *batchv1.JobStatus) {})
		}
		b.wait(removedAfter)
		b.pod("a", unfinalized)
		b.pod("a", func(p *corev1.Pod) { p.Labels = map[string]string{"changed": "not its finalizer"} })
		if deleted {
			b.pod("a", deleting)
		}
		return b
	}
	expectOK(t, FinalizerAfterRecord, ctx, run(true, time.Second, time.Second, true))
	// A loaded apiserver: the cache the controller deleted from lagged, its
	// requests waited (the built-in at 10,000 pods: 30–40 s in all).
	expectOK(t, FinalizerAfterRecord, ctx, run(true, -time.Second, 40*time.Second, true))
	expectViolation(t, FinalizerAfterRecord, ctx, run(true, time.Second, time.Second, false), "lost its finalizer")     // not deleted: let go uncounted
	expectViolation(t, FinalizerAfterRecord, ctx, run(true, 30*time.Second, time.Second, true), "lost its finalizer")   // finished long before the suspension: the controller knew
	expectViolation(t, FinalizerAfterRecord, ctx, run(false, time.Second, time.Second, true), "lost its finalizer")     // nothing asked for its deletion
	expectViolation(t, FinalizerAfterRecord, ctx, run(false, -time.Second, 40*time.Second, true), "lost its finalizer") // nothing asked, however loaded
}
