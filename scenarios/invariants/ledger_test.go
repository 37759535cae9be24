package invariants

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func succeeded(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }

// finishWith writes the Job's terminal status with the given counters.
func finishWith(b *builder, typ batchv1.JobConditionType, succ, fail int32, completed string) *builder {
	return b.status(func(s *batchv1.JobStatus) {
		target := batchv1.JobSuccessCriteriaMet
		if typ == batchv1.JobFailed {
			target = batchv1.JobFailureTarget
		}
		s.Conditions = []batchv1.JobCondition{cond(target, "r"), cond(typ, "r")}
		s.Succeeded, s.Failed, s.CompletedIndexes = succ, fail, completed
	})
}

func TestLedger(t *testing.T) {
	ctx := Context{Finalizer: fin}
	// One failure, then a success: succeeded=1 failed=1.
	run := func() *builder {
		return newBuilder().pod("a", running).pod("a", failed).pod("b", running).pod("b", succeeded)
	}
	expectOK(t, Ledger, ctx, finishWith(run(), batchv1.JobComplete, 1, 1, ""))
	expectViolation(t, Ledger, ctx, finishWith(run(), batchv1.JobComplete, 1, 2, ""), "failed=2, but its pods say 1")
	expectViolation(t, Ledger, ctx, finishWith(run(), batchv1.JobComplete, 1, 0, ""), "failed=0, but its pods say 1")
	expectViolation(t, Ledger, ctx, finishWith(run(), batchv1.JobComplete, 2, 1, ""), "succeeded=2, but its pods say 1")
	// Not finished: nothing to judge yet.
	expectOK(t, Ledger, ctx, run().status(func(s *batchv1.JobStatus) { s.Failed = 5 }))

	// Deleted while running, then succeeded within its grace period: either way, once.
	either := func() *builder {
		return newBuilder().pod("a", running).pod("a", deleting).pod("a", succeeded).pod("b", running).pod("b", succeeded)
	}
	expectOK(t, Ledger, ctx, finishWith(either(), batchv1.JobComplete, 1, 1, ""))
	expectOK(t, Ledger, ctx, finishWith(either(), batchv1.JobComplete, 2, 0, ""))
	expectViolation(t, Ledger, ctx, finishWith(either(), batchv1.JobComplete, 2, 2, ""), "failed=2, but its pods say between 0 and 1")

	// Under podReplacementPolicy Failed a deleted pod that vanishes without a
	// terminal phase need not count; under TerminatingOrFailed it must.
	vanish := func(policy batchv1.PodReplacementPolicy) *builder {
		b := newBuilder(func(j *batchv1.Job) { j.Spec.PodReplacementPolicy = ptr.To(policy) })
		b.pod("a", running).pod("a", deleting).podGone("a")
		return b.pod("b", running).pod("b", succeeded)
	}
	expectOK(t, Ledger, ctx, finishWith(vanish(batchv1.Failed), batchv1.JobComplete, 1, 0, ""))
	expectViolation(t, Ledger, ctx, finishWith(vanish(batchv1.TerminatingOrFailed), batchv1.JobComplete, 1, 0, ""), "failed=0, but its pods say 1")

	// The Job failed while b ran: b counts as failed.
	fail := newBuilder().pod("a", running).pod("b", running).pod("a", failed)
	fail.status(func(s *batchv1.JobStatus) {
		s.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, "BackoffLimitExceeded")}
	})
	fail.pod("b", deleting).pod("b", failed)
	expectViolation(t, Ledger, ctx, finishWith(fail, batchv1.JobFailed, 0, 1, ""), "failed=1, but its pods say 2")

	// Indexed: completedIndexes is what succeeded, in range.
	indexed := func() *builder {
		b := newBuilder(func(j *batchv1.Job) {
			j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
			j.Spec.Parallelism, j.Spec.Completions = ptr.To[int32](3), ptr.To[int32](3)
		})
		for _, ix := range []string{"0", "1", "2"} {
			b.pod("p"+ix, withIndex(ix)).pod("p"+ix, succeeded)
		}
		return b
	}
	expectOK(t, Ledger, ctx, finishWith(indexed(), batchv1.JobComplete, 3, 0, "0-2"))
	expectViolation(t, Ledger, ctx, finishWith(indexed(), batchv1.JobComplete, 3, 0, "0,2"), "lacks index 1")
	expectViolation(t, Ledger, ctx, finishWith(indexed(), batchv1.JobComplete, 3, 0, "0-3"), "holds index 3")
}

// The sync that meets the success criteria deletes the pods still running,
// then writes SuccessCriteriaMet; on a loaded apiserver a deleted pod may be
// Failed before that write lands, and the controller need not count it. A pod
// deleted and failed before the Job's previous status (an eviction) counts.
func TestLedgerPodsDeletedWithTheSuccess(t *testing.T) {
	ctx := Context{Finalizer: fin}
	run := func(evictedEarlier bool) *builder {
		b := newBuilder().pod("a", running).pod("b", running).pod("a", succeeded)
		if evictedEarlier {
			b.pod("b", deleting).pod("b", failed).status(func(s *batchv1.JobStatus) { s.Succeeded = 1 })
		} else {
			b.status(func(s *batchv1.JobStatus) { s.Succeeded = 1 }).pod("b", deleting).pod("b", failed)
		}
		return b.status(func(s *batchv1.JobStatus) {
			s.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, "SuccessPolicy")}
		})
	}
	expectOK(t, Ledger, ctx, finishWith(run(false), batchv1.JobComplete, 1, 0, ""))
	expectOK(t, Ledger, ctx, finishWith(run(false), batchv1.JobComplete, 1, 1, ""))
	expectViolation(t, Ledger, ctx, finishWith(run(true), batchv1.JobComplete, 1, 0, ""), "failed=0, but its pods say 1")
}

func TestIndexList(t *testing.T) {
	got := indexList("0,2-4,9")
	want := []int{0, 2, 3, 4, 9}
	if len(got) != len(want) {
		t.Fatalf("indexList = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("indexList = %v, want %v", got, want)
		}
	}
}

// Pods a suspension deletes are let go uncounted: a controller that counts
// them as failures breaks the ledger.
func TestLedgerSuspension(t *testing.T) {
	ctx := Context{Finalizer: fin}
	suspendRun := func(release bool) *builder {
		b := newBuilder().pod("a", running)
		b.job.Spec.Suspend = ptr.To(true)
		b.add("Job", "MODIFIED", b.job.DeepCopy())
		if release {
			b.pod("a", unfinalized)
		}
		b.pod("a", deleting).pod("a", failed)
		b.job.Spec.Suspend = ptr.To(false)
		b.add("Job", "MODIFIED", b.job.DeepCopy())
		return b.pod("b", running).pod("b", succeeded)
	}
	expectOK(t, Ledger, ctx, finishWith(suspendRun(true), batchv1.JobComplete, 1, 0, ""))
	expectViolation(t, Ledger, ctx, finishWith(suspendRun(false), batchv1.JobComplete, 1, 1, ""), "failed=1, but its pods say 0")
	// Released while running, outside a suspension (an excess pod): not counted either.
	excess := newBuilder().pod("a", running).pod("a", unfinalized).pod("a", deleting).pod("a", failed).pod("b", running).pod("b", succeeded)
	expectOK(t, Ledger, ctx, finishWith(excess, batchv1.JobComplete, 1, 0, ""))
}

// A pod that succeeds just before the controller, failing the Job, deletes
// it as active (its cache had it running) may count as a failure; one that
// succeeded long before counts as its success.
func TestLedgerDeletedAsActive(t *testing.T) {
	ctx := Context{Finalizer: fin}
	run := func(finishedBefore time.Duration, removeFirst bool) *builder {
		b := newBuilder().pod("a", running).pod("b", running).pod("a", failed)
		b.pod("b", succeeded)
		b.wait(finishedBefore)
		if removeFirst {
			b.pod("b", unfinalized)
		}
		b.pod("b", deleting)
		return finishWith(b, batchv1.JobFailed, 0, 2, "")
	}
	expectOK(t, Ledger, ctx, run(time.Second, true))
	expectOK(t, Ledger, ctx, run(time.Second, false))
	expectViolation(t, Ledger, ctx, run(30*time.Second, true), "succeeded=0, but its pods say 1")
}

// A pod that fails just before the controller deletes it as active (a
// scale-down from a cache that had it running: upstream's deleteJobPods
// removes its finalizer, then deletes it) may go uncounted, or be counted;
// one that failed long before must be counted (make test's rehearsal of
// 2026-12-07: the reference on explore-4-110, failed=2 where 3 pods failed,
// one of them 0.5 s before its finalizer went).
func TestLedgerFailedDeletedAsActive(t *testing.T) {
	ctx := Context{Finalizer: fin}
	run := func(failedBefore time.Duration, counted int32) *builder {
		b := newBuilder().pod("a", running).pod("c", running).pod("c", failed)
		b.wait(failedBefore)
		b.pod("c", unfinalized).pod("c", deleting).pod("a", succeeded)
		return finishWith(b, batchv1.JobComplete, 1, counted, "")
	}
	expectOK(t, Ledger, ctx, run(500*time.Millisecond, 0))
	expectOK(t, Ledger, ctx, run(500*time.Millisecond, 1))
	expectViolation(t, Ledger, ctx, run(30*time.Second, 0), "failed=0, but its pods say 1")
}

// A pod the controller lets go while it runs (its labels no longer match:
// its owner reference and finalizer dropped) counts for nothing, though it
// fails later, after the Job failed (explore seed 3, case 152: v1.37.1's
// built-in and the reference alike). A pod still the Job's counts.
func TestLedgerPodLetGo(t *testing.T) {
	ctx := Context{Finalizer: fin}
	run := func(letGo bool) *builder {
		b := newBuilder().pod("a", running)
		if letGo {
			b.pod("a", func(p *corev1.Pod) { p.OwnerReferences, p.Finalizers = nil, nil })
		}
		b.pod("b", running).pod("b", failed)
		b.status(func(s *batchv1.JobStatus) {
			s.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, "BackoffLimitExceeded")}
		})
		b.pod("a", failed)
		return b
	}
	expectOK(t, Ledger, ctx, finishWith(run(true), batchv1.JobFailed, 0, 1, ""))
	expectViolation(t, Ledger, ctx, finishWith(run(false), batchv1.JobFailed, 0, 1, ""), "failed=1, but its pods say 2")
}
