package invariants

import (
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// A run that ends 5 s after its last change in a wrong final state — a
// controller that never lowers status.active once a pod is deleted — was
// not judged: active-settles needs countSettleWindow of quiet. Pending says
// the verdict is not in, and once the state has lasted the window it is a
// violation. The right final state is pending for nothing.
func TestPendingJudgesTheEnd(t *testing.T) {
	active := func(n int32) func(*batchv1.JobStatus) { return func(s *batchv1.JobStatus) { s.Active = n } }
	run := func(final int32) *builder {
		b := newBuilder().pod("a", running).pod("b", running).status(active(2))
		b.wait(countSettleWindow)
		b.pod("a", deleting).pod("b", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }).status(active(final))
		b.wait(SettleWindow) // what the runner used to record after the last change
		return b
	}
	wrong := run(2)
	ctx := Context{End: wrong.now, Job: "j"}
	expectOK(t, ActiveSettles, ctx, wrong) // cut off: no verdict
	if p := Pending(ctx, wrong.tl, nil); !slices.Contains(p, "active-settles") {
		t.Fatalf("the wrong final count is not pending: %v", p)
	}
	if p := Pending(ctx, wrong.tl, []string{"terminating-settles"}); len(p) != 0 {
		t.Fatalf("asked of terminating-settles alone: %v", p)
	}
	// Recorded on for the window, unchanged: judged.
	later := Context{End: wrong.now.Add(countSettleWindow - SettleWindow), Job: "j"}
	expectViolation(t, ActiveSettles, later, wrong, "status.active=2 but 0 pods were active")
	if p := Pending(later, wrong.tl, nil); slices.Contains(p, "active-settles") {
		t.Fatalf("judged, yet still pending: %v", p)
	}
	right := run(0)
	if p := Pending(Context{End: right.now, Job: "j"}, right.tl, nil); slices.Contains(p, "active-settles") || slices.Contains(p, "terminating-settles") {
		t.Fatalf("the right final counts are pending: %v", p)
	}
}

// No invariant's window is longer than what the runner records after the
// last change when a verdict is pending.
func TestTailCoversEveryWindow(t *testing.T) {
	for name, w := range map[string]time.Duration{"countSettleWindow": countSettleWindow, "AdoptionGrace": AdoptionGrace, "DeletionGrace": DeletionGrace,
		"TerminalEventGrace": TerminalEventGrace, "SettleWindow": SettleWindow} {
		if w > Tail {
			t.Errorf("%s is %s, longer than Tail (%s)", name, w, Tail)
		}
	}
}
