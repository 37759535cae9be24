package invariants

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The cause lines of adoption, indexes-valid and ready-follows: a sync of the
// controller (a status write, a pod it created) more than CauseGrace after
// it was due to act, which left it undone, fails it long before the clock's
// bound; the same sync within the grace, across a restart, or a no-op,
// proves nothing.
func TestLateByCause(t *testing.T) {
	selector := func(j *batchv1.Job) {
		j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	}
	orphan := func(b *builder) *builder {
		return b.pod("a", func(p *corev1.Pod) { p.Labels = map[string]string{"app": "x"}; running(p) }).
			pod("a", func(p *corev1.Pod) { p.OwnerReferences = nil; unfinalized(p) })
	}
	write := func(b *builder, after time.Duration) *builder {
		b.wait(after)
		return b.status(func(s *batchv1.JobStatus) { s.Active++ })
	}
	ctx := Context{Job: "j", Finalizer: fin}

	// Adoption: a status write 6 s after the orphan, still not adopted.
	expectViolation(t, Adoption, ctx, write(orphan(newBuilder(selector)), CauseGrace+time.Second),
		"wrote the Job's status 6.1s after pod a was due to be adopted")
	// A pod it created instead of adopting the orphan.
	created := orphan(newBuilder(selector))
	created.wait(CauseGrace + time.Second)
	expectViolation(t, Adoption, ctx, created.pod("b", running), "created pod b 6.1s after pod a was due to be adopted")
	// Within the grace, or a write that changed nothing: no verdict.
	expectOK(t, Adoption, ctx, write(orphan(newBuilder(selector)), CauseGrace-time.Second))
	idle := orphan(newBuilder(selector))
	idle.wait(CauseGrace + time.Second)
	expectOK(t, Adoption, ctx, idle.status(func(*batchv1.JobStatus) {}))
	// A restart between the orphan and the write: no verdict.
	restarted := write(orphan(newBuilder(selector)), CauseGrace+time.Second)
	expectOK(t, Adoption, Context{Job: "j", Finalizer: fin, Restarts: []time.Time{restarted.now.Add(-time.Second)}}, restarted)
	// Proven once, not again by the clock.
	twice := write(orphan(newBuilder(selector)), CauseGrace+time.Second)
	twice.wait(AdoptionGrace)
	if v := check(t, Adoption, ctx, twice.status(func(*batchv1.JobStatus) {})); len(v) != 1 {
		t.Errorf("adoption: %d violations for one orphan, want 1: %v", len(v), v)
	}

	// An orphan there before the Job is first seen is due as well.
	first := orphan(newBuilder(selector))
	first.tl = first.tl[1:] // the pod's changes before the Job's creation
	first.tl[0].Object.(*corev1.Pod).ResourceVersion, first.tl[1].Object.(*corev1.Pod).ResourceVersion = "1", "2"
	job := newBuilder(selector).tl[0]
	job.Object.(*batchv1.Job).ResourceVersion = "3"
	job.Time = first.now
	first.tl = append(first.tl, job)
	first.rv = 3
	expectViolation(t, Adoption, ctx, write(first, CauseGrace+time.Second), "after pod a was due to be adopted")

	// indexes-valid: a duplicate index left running past a status write.
	dup := newBuilder(indexedJob(2)).pod("a", withIndex("0")).pod("b", withIndex("0"))
	expectViolation(t, IndexesValid, Context{Job: "j"}, write(dup, CauseGrace+time.Second),
		"index 0 has 2 running pods [a b]: the controller wrote the Job's status 6.1s later and left it running")
	soon := newBuilder(indexedJob(2)).pod("a", withIndex("0")).pod("b", withIndex("0"))
	expectOK(t, IndexesValid, Context{Job: "j"}, write(soon, CauseGrace-time.Second))

	// ready-follows: a status written 6 s after a pod became Ready, without
	// it — the clock line has no earlier status to judge here.
	readyPod := func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	}
	stale := newBuilder().pod("a", readyPod)
	stale.wait(CauseGrace + time.Second)
	stale.status(func(s *batchv1.JobStatus) { s.Active = 1; s.Ready = ptr.To[int32](0) })
	expectViolation(t, ReadyFollows, Context{ReadyWithin: 2 * time.Second, End: stale.now}, stale,
		"wrote status.ready=0 6.1s after the Job's pods last changed: 1 pods were ready")
	if v := check(t, ReadyFollows, Context{ReadyWithin: 2 * time.Second, End: stale.now.Add(time.Minute)}, stale); len(v) != 1 {
		t.Errorf("ready-follows: %d violations for one stale count, want 1: %v", len(v), v)
	}
	// A suspended Job owes no count.
	suspended := newBuilder(func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) }).pod("a", readyPod)
	suspended.wait(CauseGrace + time.Second)
	suspended.status(func(s *batchv1.JobStatus) { s.Ready = ptr.To[int32](0) })
	expectOK(t, ReadyFollows, Context{ReadyWithin: 2 * time.Second, End: suspended.now}, suspended)
}

// TestStaleWriteCountsFromAPodsEnd: a controller deleting a pod its cache
// still shows running counts it terminating in the same write; if the pod had
// ended just before, the count never changed (0 terminating throughout), and
// the write is stale by the pod's end, not by the count's last change —
// what the built-in (deleteActivePods) and the reference both do at FailJob
// on loaded kubelet nodes. The same write well after the pod's end is stale.
func TestStaleWriteCountsFromAPodsEnd(t *testing.T) {
	ended := func(late time.Duration) *builder {
		b := newBuilder().pod("a", running).status(func(s *batchv1.JobStatus) { s.Active = 1; s.Terminating = ptr.To[int32](0) })
		b.wait(20 * time.Second)
		b.pod("a", failed)
		b.wait(late)
		b.pod("a", deleting)
		b.wait(200 * time.Millisecond)
		return b.status(func(s *batchv1.JobStatus) { s.Active = 0; s.Terminating = ptr.To[int32](1) })
	}
	ctx := func(b *builder) Context { return Context{End: b.now, Version: "v1.37.1"} }
	soon := ended(time.Second)
	expectOK(t, TerminatingSettles, ctx(soon), soon)
	late := ended(CauseGrace + time.Second)
	expectViolation(t, TerminatingSettles, ctx(late), late, "wrote status.terminating=1 6.4s after the Job's pods last changed: 0 pods were terminating")
}

// TestCauseVoidWhenStarved: past the load a sync was measured to read and
// write within CauseGrace, a late act proves nothing by cause — the verdict
// says why — while the clock line still judges.
func TestCauseVoidWhenStarved(t *testing.T) {
	selector := func(j *batchv1.Job) {
		j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	}
	orphan := newBuilder(selector).pod("a", func(p *corev1.Pod) { p.Labels = map[string]string{"app": "x"}; running(p) }).
		pod("a", func(p *corev1.Pod) { p.OwnerReferences = nil; unfinalized(p) })
	due := orphan.now
	orphan.wait(CauseGrace + time.Second)
	orphan.status(func(s *batchv1.JobStatus) { s.Active++ })
	var asked []time.Time
	starved := func(from, to time.Time) string {
		asked = append(asked, from, to)
		return "run queue 15.6 per CPU (peak 28.0)"
	}
	ctx := Context{Job: "j", Finalizer: fin, End: orphan.now, Starved: starved}
	r := Adoption.Evaluate(ctx, orphan.tl)
	if len(r.Violations) != 0 || len(r.Unjudged) != 1 || !strings.Contains(r.Unjudged[0], "the machine was starved then (run queue 15.6") {
		t.Fatalf("a late write on a starved machine: %+v", r)
	}
	if len(asked) != 2 || asked[0].Sub(due) > time.Second || !asked[1].Equal(orphan.now) {
		t.Errorf("asked about %v, want from the orphan's coming (%v) to the write (%v)", asked, due, orphan.now)
	}
	// Not starved: the same write proves it late.
	ctx.Starved = func(time.Time, time.Time) string { return "" }
	expectViolation(t, Adoption, ctx, orphan, "after pod a was due to be adopted")
	// Starved, but left undone past the clock's bound: late by the clock.
	orphan.wait(AdoptionGrace)
	ctx.Starved, ctx.End = starved, orphan.now
	expectViolation(t, Adoption, ctx, orphan.status(func(s *batchv1.JobStatus) { s.Active++ }), "pod a")

	// The stale count's cause line is voided alike (the deadline's:
	// TestDeadlineOnTime).
	stale := newBuilder().pod("a", running).pod("a", deleting)
	stale.wait(CauseGrace + time.Second)
	stale.status(func(s *batchv1.JobStatus) { s.Active = 1; s.Terminating = ptr.To[int32](0) })
	stale.wait(time.Second)
	stale.status(func(s *batchv1.JobStatus) { s.Active = 0; s.Terminating = ptr.To[int32](1) })
	stale.wait(20 * time.Second)
	if r := TerminatingSettles.Evaluate(Context{Job: "j", End: stale.now, Version: "v1.37.1", Starved: starved}, stale.tl); len(r.Violations) != 0 || len(r.Unjudged) == 0 {
		t.Errorf("terminating-settles, starved: %+v", r)
	}
	if r := TerminatingSettles.Evaluate(Context{Job: "j", End: stale.now, Version: "v1.37.1"}, stale.tl); len(r.Violations) == 0 {
		t.Errorf("terminating-settles, not starved: the stale write passed")
	}
}
