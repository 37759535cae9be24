package invariants

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/timeline"
)

func TestSuspendedCreatesNoPods(t *testing.T) {
	ctx := Context{Job: "j"}
	setSuspend := func(b *builder, v bool) *builder {
		b.job.Spec.Suspend = ptr.To(v)
		b.add("Job", timeline.Modified, b.job.DeepCopy())
		return b
	}
	// Created suspended: any pod is one too many, however late or early.
	created := newBuilder(func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) })
	expectViolation(t, SuspendedCreatesNoPods, ctx, created.pod("a", nil), "pod a created while the Job was suspended (created suspended")
	// Resumed, then pods: fine.
	resumed := newBuilder(func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) })
	setSuspend(resumed, false)
	expectOK(t, SuspendedCreatesNoPods, ctx, resumed.pod("a", nil))
	// Suspended later: a pod from a sync that read the Job before is excused
	// for SettleWindow, not after.
	race := setSuspend(newBuilder().pod("a", running), true).pod("b", nil)
	expectOK(t, SuspendedCreatesNoPods, ctx, race)
	late := setSuspend(newBuilder().pod("a", running), true)
	late.wait(SettleWindow)
	expectViolation(t, SuspendedCreatesNoPods, ctx, late.pod("b", nil), "pod b created while the Job was suspended (suspended 5.1s before)")
	// An apiserver restart just before excuses the lag.
	late2 := setSuspend(newBuilder().pod("a", running), true)
	late2.wait(SettleWindow)
	expectOK(t, SuspendedCreatesNoPods, Context{Job: "j", Restarts: []time.Time{late2.now}}, late2.pod("b", nil))
	// A pod the scenario brought is not the controller's doing.
	brought := newBuilder(func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) }).pod("x", func(p *corev1.Pod) { p.Annotations = map[string]string{BroughtAnnotation: "createPod"} })
	expectOK(t, SuspendedCreatesNoPods, ctx, brought)
}
