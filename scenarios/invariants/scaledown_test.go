package invariants

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/timeline"
)

func TestScaleDownOrder(t *testing.T) {
	ctx := Context{Job: "j"}
	ready := func(p *corev1.Pod) {
		p.Spec.NodeName = "n"
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	}
	notReady := func(p *corev1.Pod) { p.Spec.NodeName = "n"; p.Status.Phase = corev1.PodRunning }
	scaled := func(deleted string) *builder {
		b := newBuilder(func(j *batchv1.Job) { j.Spec.Parallelism, j.Spec.Completions = ptr.To[int32](2), ptr.To[int32](4) })
		b.pod("a", ready).pod("b", notReady)
		b.wait(SettleWindow)
		b.job.Spec.Parallelism = ptr.To[int32](1)
		b.add("Job", timeline.Modified, b.job.DeepCopy())
		return b.pod(deleted, deleting)
	}
	expectOK(t, ScaleDownOrder, ctx, scaled("b"))
	expectViolation(t, ScaleDownOrder, ctx, scaled("a"), "deleted pod a (running, ready) while keeping b (running, not ready)")
	// Ranks that changed just now are not held against the controller.
	fresh := newBuilder(func(j *batchv1.Job) { j.Spec.Parallelism, j.Spec.Completions = ptr.To[int32](2), ptr.To[int32](4) })
	fresh.pod("a", ready).pod("b", notReady)
	fresh.job.Spec.Parallelism = ptr.To[int32](1)
	fresh.add("Job", timeline.Modified, fresh.job.DeepCopy())
	expectOK(t, ScaleDownOrder, ctx, fresh.pod("a", deleting))
	// No surplus: a deletion by someone else says nothing of the order.
	full := newBuilder(func(j *batchv1.Job) { j.Spec.Parallelism, j.Spec.Completions = ptr.To[int32](2), ptr.To[int32](4) })
	full.pod("a", ready).pod("b", notReady)
	full.wait(SettleWindow)
	expectOK(t, ScaleDownOrder, ctx, full.pod("a", deleting))
}
