package invariants

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/timeline"
)

// ready-seen: a status that counts a pod ready before it was fails; one
// that counts it from a stale cache after it turned unready, or counts
// fewer, does not.
func TestReadySeen(t *testing.T) {
	ready := func(v corev1.ConditionStatus) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: v}}
		}
	}
	write := func(b *builder, active, r int32) {
		b.status(func(s *batchv1.JobStatus) { s.Active = active; s.Ready = ptr.To(r) })
	}

	// Counted while still starting (ready-high-for-a-moment): caught.
	early := newBuilder().pod("a", ready(corev1.ConditionFalse)).pod("b", ready(corev1.ConditionFalse))
	write(early, 2, 2)
	early.wait(2 * time.Second)
	early.pod("a", ready(corev1.ConditionTrue)).pod("b", ready(corev1.ConditionTrue))
	expectViolation(t, ReadySeen, Context{End: early.now}, early, "status.ready=2, but at most 0")

	// One Ready, two counted: caught.
	one := newBuilder().pod("a", ready(corev1.ConditionTrue)).pod("b", ready(corev1.ConditionFalse))
	write(one, 2, 2)
	expectViolation(t, ReadySeen, Context{End: one.now}, one, "at most 1")

	// A stale cache: a pod counted ready after it turned unready, then
	// after it failed; and a count lower than the pods Ready: no violation.
	stale := newBuilder().pod("a", ready(corev1.ConditionTrue)).pod("b", ready(corev1.ConditionTrue))
	stale.pod("a", ready(corev1.ConditionFalse))
	write(stale, 2, 2)
	stale.pod("b", func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed })
	write(stale, 1, 1)
	write(stale, 0, 0)
	expectOK(t, ReadySeen, Context{End: stale.now}, stale)

	// Two pods Ready one after the other, never at once, counted as two:
	// no snapshot showed that.
	apart := newBuilder().pod("a", ready(corev1.ConditionTrue))
	apart.pod("a", ready(corev1.ConditionFalse)).pod("b", ready(corev1.ConditionTrue))
	write(apart, 2, 2)
	expectViolation(t, ReadySeen, Context{End: apart.now}, apart, "at most 1")

	// After a gap in the recording, or on a dispatched Job: not judged.
	gap := newBuilder().pod("a", ready(corev1.ConditionFalse))
	gap.wait(time.Second)
	from := gap.now
	write(gap, 1, 1)
	expectOK(t, ReadySeen, Context{End: gap.now, Gaps: []timeline.Span{{From: from}}}, gap)
	expectOK(t, ReadySeen, Context{End: one.now, Copy: "job-copy"}, one)
}
