package invariants

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"
)

func TestBackoff(t *testing.T) {
	for n, want := range map[int]time.Duration{1: 10 * time.Second, 2: 20 * time.Second, 4: 80 * time.Second, 7: 10 * time.Minute, 40: 10 * time.Minute} {
		if got := Backoff(n); got != want {
			t.Errorf("Backoff(%d) = %s, want %s", n, got, want)
		}
		// A controller one doubling slow misses the bound.
		if bound := ReplacementBound(n); Backoff(n+1) <= bound && Backoff(n+1) < BackoffMax {
			t.Errorf("ReplacementBound(%d) = %s lets a doubled backoff %s pass", n, bound, Backoff(n+1))
		}
	}
}

func TestReplacementTiming(t *testing.T) {
	tof := func(j *batchv1.Job) { j.Spec.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed) }
	failedPolicy := func(j *batchv1.Job) { j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed) }
	indexed := func(j *batchv1.Job) {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		j.Spec.Parallelism, j.Spec.Completions = ptr.To[int32](2), ptr.To[int32](2)
	}

	// Deleted under TerminatingOrFailed, replaced after the 10s backoff: in bounds.
	ok := newBuilder(tof).pod("a", running).pod("a", deleting)
	ok.wait(10 * time.Second)
	ok.pod("b", nil)
	expectOK(t, ReplacementTiming, Context{}, ok)

	// Replaced 30s after the first failure: late.
	late := newBuilder(tof).pod("a", running).pod("a", deleting)
	late.wait(30 * time.Second)
	late.pod("b", nil)
	expectViolation(t, ReplacementTiming, Context{}, late, "pod b replaced a (due since 00:00:00.300) 30.1s after the Job's latest failure")

	// One pod more than parallelism (an adopted orphan) deleted: the
	// controller's scale-down, nothing to replace; a pod made 30s later for
	// another reason is not timed against it.
	extra := newBuilder(tof).pod("a", running).pod("x", running).pod("x", deleting)
	extra.wait(30 * time.Second)
	extra.pod("b", nil)
	expectOK(t, ReplacementTiming, Context{}, extra)

	// Under Failed the clock starts when the pod is terminal, not at its deletion:
	// 20s of SIGTERM trap, then the replacement 10s later is in bounds.
	trap := newBuilder(failedPolicy).pod("a", running).pod("a", deleting)
	trap.wait(20 * time.Second)
	trap.pod("a", failed)
	trap.wait(10 * time.Second)
	trap.pod("b", nil)
	expectOK(t, ReplacementTiming, Context{}, trap)
	// ...but 30s after it is not.
	trapLate := newBuilder(failedPolicy).pod("a", running).pod("a", deleting)
	trapLate.wait(20 * time.Second)
	trapLate.pod("a", failed)
	trapLate.wait(30 * time.Second)
	trapLate.pod("b", nil)
	expectViolation(t, ReplacementTiming, Context{}, trapLate, "30.1s after the Job's latest failure")

	// Deleted under TerminatingOrFailed at 0s, Failed at 6s, replaced at 16s
	// (v1.34.3 starts the backoff at the Failed phase): in bounds.
	v134 := newBuilder(tof).pod("a", running).pod("a", deleting)
	v134.wait(6 * time.Second)
	v134.pod("a", failed)
	v134.wait(10 * time.Second)
	v134.pod("b", nil)
	expectOK(t, ReplacementTiming, Context{}, v134)

	// The second failure doubles the backoff: the bound is 20s + 5s + 5s,
	// so 29s after it is fine and 31s is late.
	second := newBuilder(tof).pod("a", running).pod("a", failed)
	second.wait(10 * time.Second)
	second.pod("b", running).pod("b", failed)
	second.wait(29 * time.Second)
	second.pod("c", nil)
	expectOK(t, ReplacementTiming, Context{}, second)
	secondLate := newBuilder(tof).pod("a", running).pod("a", failed)
	secondLate.wait(10 * time.Second)
	secondLate.pod("b", running).pod("b", failed)
	secondLate.wait(31 * time.Second)
	secondLate.pod("c", nil)
	expectViolation(t, ReplacementTiming, Context{}, secondLate, "(bound 30s: backoff 20s after 2 failures")

	// Indexed: matched by index; index 1 replaced late even though index 0's
	// new pod came early.
	idx := newBuilder(tof, indexed).pod("a0", withIndex("0")).pod("a1", withIndex("1")).
		pod("a0", running).pod("a1", running).pod("a1", deleting)
	idx.wait(2 * time.Second)
	idx.pod("a0", deleting).pod("b0", withIndex("0"))
	idx.wait(40 * time.Second)
	idx.pod("b1", withIndex("1"))
	expectViolation(t, ReplacementTiming, Context{}, idx, "pod b1 replaced a1")

	// The backoff runs from the Job's latest failure and counts them all (the
	// built-in with an Ignore rule, seen on v1.37.1): pods failing at 0s, 0s and
	// 3s are all replaced 40s after the last one.
	burst := newBuilder(tof, func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](3) }).
		pod("a", running).pod("b", running).pod("c", running).pod("a", failed).pod("b", failed)
	burst.wait(3 * time.Second)
	burst.pod("c", failed)
	burst.wait(40 * time.Second)
	burst.pod("d", nil).pod("e", nil).pod("f", nil)
	expectOK(t, ReplacementTiming, Context{}, burst)
	burst.wait(10 * time.Second)
	burst.pod("g", nil) // not due: no violation either
	expectOK(t, ReplacementTiming, Context{}, burst)

	// Indexed: a second pod of an index whose pod runs on, not deleted.
	dup := newBuilder(tof, indexed).pod("a0", withIndex("0")).pod("a0", running).pod("b0", withIndex("0"))
	expectViolation(t, ReplacementTiming, Context{}, dup, "created while a0 of that index runs")

	// Suspended meanwhile: the pods created on resume are not late replacements.
	susp := newBuilder(tof).pod("a", running).pod("a", deleting).status(func(s *batchv1.JobStatus) {
		s.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuspended, "JobSuspended")}
	})
	susp.wait(time.Minute)
	susp.status(func(s *batchv1.JobStatus) { s.Conditions = nil }).pod("b", nil)
	expectOK(t, ReplacementTiming, Context{}, susp)

	// A pod deleted after FailureTarget is not due for replacement.
	target := newBuilder(tof).pod("a", running).status(func(s *batchv1.JobStatus) {
		s.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, "BackoffLimitExceeded")}
	}).pod("a", deleting)
	target.wait(time.Minute)
	target.pod("b", nil)
	expectOK(t, ReplacementTiming, Context{}, target)
}
