package invariants

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func indexedJob(n int32) func(*batchv1.Job) {
	return func(j *batchv1.Job) {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		j.Spec.Parallelism, j.Spec.Completions = ptr.To(n), ptr.To(n)
	}
}

func TestIndexesValid(t *testing.T) {
	ctx := Context{Job: "j"}
	later := func(b *builder) *builder {
		b.wait(AdoptionGrace)
		return b.status(func(*batchv1.JobStatus) {})
	}
	// A duplicate of index 0 deleted at once: kept.
	ok := newBuilder(indexedJob(2)).pod("a", withIndex("0")).pod("b", withIndex("0")).pod("b", deleting)
	expectOK(t, IndexesValid, ctx, later(ok))
	// Left running: caught once the grace is over.
	dup := newBuilder(indexedJob(2)).pod("a", withIndex("0")).pod("b", withIndex("0"))
	expectOK(t, IndexesValid, ctx, dup)
	expectViolation(t, IndexesValid, ctx, later(dup), "index 0 has 2 running pods [a b]: not removed")
	// Out of range, and no index at all.
	expectViolation(t, IndexesValid, ctx, later(newBuilder(indexedJob(2)).pod("a", withIndex("5"))), "pod a has index 5, outside completions 2")
	expectViolation(t, IndexesValid, ctx, later(newBuilder(indexedJob(2)).pod("a", nil)), "pod a has no valid index")
	// A NonIndexed Job's pods have no index to check.
	expectOK(t, IndexesValid, ctx, later(newBuilder().pod("a", nil)))
}

func TestIndexFailureCount(t *testing.T) {
	ctx := Context{Job: "j"}
	perIndex := func(j *batchv1.Job) { indexedJob(2)(j); j.Spec.BackoffLimitPerIndex = ptr.To[int32](2) }
	count := func(ix, n string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			withIndex(ix)(p)
			p.Annotations[batchv1.JobIndexFailureCountAnnotation] = n
		}
	}
	ok := newBuilder(perIndex).pod("a", count("1", "0")).pod("a", failed).pod("b", count("1", "1")).pod("b", failed).pod("c", count("1", "2"))
	expectOK(t, IndexFailureCount, ctx, ok)
	stale := newBuilder(perIndex).pod("a", count("1", "0")).pod("a", failed).pod("b", count("1", "0"))
	expectViolation(t, IndexFailureCount, ctx, stale, `pod b of index 1: batch.kubernetes.io/job-index-failure-count="0"`)
	missing := newBuilder(perIndex).pod("a", withIndex("0"))
	expectViolation(t, IndexFailureCount, ctx, missing, "want 0 failures")
	// A failed pod first seen as it is removed still counts.
	gone := newBuilder(perIndex).pod("a", count("1", "0")).pod("a", failed)
	gone.podGone("a")
	expectOK(t, IndexFailureCount, ctx, gone.pod("b", count("1", "1")))
	unseen := newBuilder(perIndex).pod("a", count("1", "0"))
	unseen.pods["a"].Status.Phase = corev1.PodFailed
	unseen.podGone("a")
	expectOK(t, IndexFailureCount, ctx, unseen.pod("b", count("1", "1")))
	// A running pod being deleted counts as failed when terminating pods
	// are replaced (the default), not when only failed pods are.
	killed := newBuilder(perIndex).pod("a", count("1", "0")).pod("a", deleting).pod("b", count("1", "1"))
	expectOK(t, IndexFailureCount, ctx, killed)
	onlyFailed := func(j *batchv1.Job) { perIndex(j); j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed) }
	notYet := newBuilder(onlyFailed).pod("a", count("1", "0")).pod("a", deleting).pod("b", count("1", "1"))
	expectViolation(t, IndexFailureCount, ctx, notYet, "want 0 failures")
	// A pod killed with a grace period ends after its replacement failed:
	// the next pod follows the one with the most failures (chaos
	// seeded-soak, both controllers at v1.37.1).
	lateEnd := newBuilder(perIndex).pod("a", count("1", "0")).pod("a", deleting).pod("b", count("1", "1")).pod("b", failed).
		pod("a", failed).pod("c", count("1", "2"))
	expectOK(t, IndexFailureCount, ctx, lateEnd)
	// Other indexes' failures do not count.
	other := newBuilder(perIndex).pod("a", count("1", "0")).pod("a", failed).pod("b", count("0", "0"))
	expectOK(t, IndexFailureCount, ctx, other)
	// With an Ignore rule, the two annotations together.
	ignore := func(j *batchv1.Job) {
		perIndex(j)
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{Action: batchv1.PodFailurePolicyActionIgnore,
			OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}}}}
	}
	ignored := newBuilder(ignore).pod("a", count("1", "0")).pod("a", failed).pod("b", func(p *corev1.Pod) {
		count("1", "0")(p)
		p.Annotations[batchv1.JobIndexIgnoredFailureCountAnnotation] = "1"
	})
	expectOK(t, IndexFailureCount, ctx, ignored)
}

func TestFailedKeptUntilReplaced(t *testing.T) {
	ctx := Context{Job: "j", Finalizer: fin}
	perIndex := func(j *batchv1.Job) { indexedJob(2)(j); j.Spec.BackoffLimitPerIndex = ptr.To[int32](2) }
	count := func(ix, n string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			withIndex(ix)(p)
			p.Annotations[batchv1.JobIndexFailureCountAnnotation] = n
		}
	}
	// Replacement first, then the failed pod's finalizer: right.
	ok := newBuilder(perIndex).pod("a", count("1", "0")).pod("a", failed).pod("b", count("1", "1")).pod("a", unfinalized)
	expectOK(t, FailedKeptUntilReplaced, ctx, ok)
	// Released before any replacement: wrong.
	early := newBuilder(perIndex).pod("a", count("1", "0")).pod("a", failed).pod("a", unfinalized).pod("b", count("1", "1"))
	expectViolation(t, FailedKeptUntilReplaced, ctx, early, "pod a, the latest failure of index 1, lost")
	// Released because the index failed (failedIndexes written first): right.
	gaveUp := newBuilder(perIndex).pod("a", count("1", "2")).pod("a", failed).
		status(func(s *batchv1.JobStatus) { s.FailedIndexes = ptr.To("1") }).pod("a", unfinalized)
	expectOK(t, FailedKeptUntilReplaced, ctx, gaveUp)
	// Released while the Job fails: right.
	failing := newBuilder(perIndex).pod("a", count("1", "0")).pod("a", failed).
		status(func(s *batchv1.JobStatus) {
			s.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, "BackoffLimitExceeded")}
		}).pod("a", unfinalized)
	expectOK(t, FailedKeptUntilReplaced, ctx, failing)
	// An older failure of the index may go at once.
	older := newBuilder(perIndex).pod("a", count("1", "0")).pod("a", failed).pod("b", count("1", "1")).pod("b", failed).pod("a", unfinalized)
	expectOK(t, FailedKeptUntilReplaced, ctx, older)
	// Without backoffLimitPerIndex there is nothing to keep.
	plain := newBuilder(indexedJob(2)).pod("a", withIndex("1")).pod("a", failed).pod("a", unfinalized)
	expectOK(t, FailedKeptUntilReplaced, ctx, plain)
}
