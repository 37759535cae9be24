package invariants

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
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

	// An Indexed Job scaled from 2 to 1: the pod the scale-down removed
	// ends (Failed, its trap done) after the rescale, with index 1's pod
	// still running: nothing is due; index 0's next pod comes when index 1
	// has ended, 20s on, and is not timed against it (explore-4-1054).
	scaled := newBuilder(failedPolicy, indexed).pod("a", withIndex("0")).pod("a", running).pod("b", withIndex("1")).pod("b", running)
	scaled.job.Spec.Parallelism = ptr.To[int32](1)
	scaled.status(func(s *batchv1.JobStatus) { s.Active = 2 })
	scaled.pod("a", unfinalized).pod("a", deleting)
	scaled.wait(2 * time.Second)
	scaled.pod("a", failed).podGone("a")
	scaled.wait(20 * time.Second)
	scaled.pod("b", succeeded)
	scaled.status(func(s *batchv1.JobStatus) { s.Succeeded, s.CompletedIndexes = 1, "1" })
	scaled.pod("c", withIndex("0"))
	expectOK(t, ReplacementTiming, Context{}, scaled)
	// The same pod failing on its own, with index 1 running and
	// parallelism 2, is due, and 30s is late.
	own := newBuilder(failedPolicy, indexed).pod("a", withIndex("0")).pod("a", running).pod("b", withIndex("1")).pod("b", running)
	own.pod("a", failed)
	own.wait(30 * time.Second)
	own.pod("c", withIndex("0"))
	expectViolation(t, ReplacementTiming, Context{}, own, "pod c replaced a")

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

// By cause: a status write after a replacement was due, without it, proves
// the controller late whatever the clock; a write within CauseGrace of the
// due time, or while the Job wants no pod, proves nothing.
func TestReplacementTimingByCause(t *testing.T) {
	par2 := func(j *batchv1.Job) {
		j.Spec.Parallelism, j.Spec.Completions = ptr.To[int32](2), ptr.To[int32](2)
		j.Spec.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
	}
	// a fails at 0s (due at 10s); the controller writes the status at 16s
	// (b became ready) without a replacement, then replaces a at 17s: in
	// the clock's bound (17.5s), late by its own write.
	late := newBuilder(par2).pod("a", running).pod("b", running).pod("a", failed)
	late.status(func(s *batchv1.JobStatus) { s.Failed, s.Active = 1, 1 })
	late.wait(16 * time.Second)
	late.status(func(s *batchv1.JobStatus) { s.Ready = ptr.To[int32](1) })
	late.wait(time.Second)
	late.pod("c", nil)
	expectViolation(t, ReplacementTiming, Context{}, late, "wrote the Job's status 6.2s after the replacement of pod a was due")
	if v := check(t, ReplacementTiming, Context{}, late); len(v) != 1 {
		t.Errorf("one late replacement, %d violations: %v", len(v), v)
	}

	// The same write 14s after the failure (within CauseGrace of the due
	// time): a sync that read the state before it was due.
	early := newBuilder(par2).pod("a", running).pod("b", running).pod("a", failed)
	early.status(func(s *batchv1.JobStatus) { s.Failed, s.Active = 1, 1 })
	early.wait(14 * time.Second)
	early.status(func(s *batchv1.JobStatus) { s.Ready = ptr.To[int32](1) })
	early.wait(time.Second)
	early.pod("c", nil)
	expectOK(t, ReplacementTiming, Context{}, early)

	// The replacement c came on time: a later write owes nothing.
	done := newBuilder(par2).pod("a", running).pod("b", running).pod("a", failed)
	done.wait(10 * time.Second)
	done.pod("c", nil)
	done.wait(10 * time.Second)
	done.status(func(s *batchv1.JobStatus) { s.Failed, s.Active = 1, 2 })
	expectOK(t, ReplacementTiming, Context{}, done)

	// A work queue with a success wants no more pods: its writes owe none.
	queue := newBuilder(func(j *batchv1.Job) { j.Spec.Parallelism, j.Spec.Completions = ptr.To[int32](2), nil }).
		pod("a", running).pod("b", running).pod("a", failed).pod("b", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })
	queue.wait(20 * time.Second)
	queue.status(func(s *batchv1.JobStatus) { s.Failed, s.Succeeded = 1, 1 })
	expectOK(t, ReplacementTiming, Context{}, queue)

	// A restart between the failure and the write: the controller forgot
	// its backoff; no proof.
	restarted := newBuilder(par2).pod("a", running).pod("b", running).pod("a", failed)
	restarted.wait(16 * time.Second)
	restarted.status(func(s *batchv1.JobStatus) { s.Failed, s.Active = 1, 1 })
	expectOK(t, ReplacementTiming, Context{Restarts: []time.Time{restarted.now.Add(-5 * time.Second)}}, restarted)
}

// By cause: a status write that still shows a terminating pod's old count
// more than CauseGrace after the pod changed it is stale, though the
// recording never settles for 10s.
func TestSettledCountsByCause(t *testing.T) {
	busy := func(b *builder, d time.Duration) {
		for range int(d / (2 * time.Second)) {
			b.wait(2 * time.Second)
			b.pod("x", running) // another pod's updates: never quiet for 10s
		}
	}
	stale := newBuilder(func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](2) }).pod("a", running).pod("x", running)
	stale.status(func(s *batchv1.JobStatus) { s.Active, s.Terminating = 2, ptr.To[int32](0) })
	stale.pod("a", deleting)
	busy(stale, 8*time.Second)
	stale.status(func(s *batchv1.JobStatus) { s.Ready = ptr.To[int32](2) }) // 8s on, terminating still 0
	expectViolation(t, TerminatingSettles, Context{}, stale, "wrote status.terminating=0 8.")

	fresh := newBuilder(func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](2) }).pod("a", running).pod("x", running)
	fresh.status(func(s *batchv1.JobStatus) { s.Active, s.Terminating = 2, ptr.To[int32](0) })
	fresh.pod("a", deleting)
	busy(fresh, 4*time.Second)
	fresh.status(func(s *batchv1.JobStatus) { s.Ready = ptr.To[int32](2) }) // 4s on: within CauseGrace
	busy(fresh, 4*time.Second)
	fresh.status(func(s *batchv1.JobStatus) { s.Active, s.Terminating = 1, ptr.To[int32](1) })
	expectOK(t, TerminatingSettles, Context{}, fresh)
}
