package invariants

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestWorkQueueNoRefill(t *testing.T) {
	queue := func(j *batchv1.Job) { j.Spec.Completions = nil }
	succeeded := func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }
	// A pod succeeds, the status records it, the other runs on: the Job is done.
	ok := newBuilder(queue).pod("a", running).pod("b", running).pod("a", succeeded)
	ok.status(func(s *batchv1.JobStatus) { s.Succeeded = 1 })
	ok.pod("b", succeeded)
	expectOK(t, WorkQueueNoRefill, Context{}, ok)
	// A pod created before the status recorded the success: the sync may not have seen it.
	racing := newBuilder(queue).pod("a", running).pod("a", succeeded).pod("c", nil)
	racing.status(func(s *batchv1.JobStatus) { s.Succeeded = 1 })
	expectOK(t, WorkQueueNoRefill, Context{}, racing)
	// After the status recorded it (uncounted, as the tracking protocol writes first): caught.
	refill := newBuilder(queue).pod("a", running).pod("a", succeeded)
	refill.status(func(s *batchv1.JobStatus) {
		s.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"uid-a"}}
	})
	refill.pod("c", nil)
	expectViolation(t, WorkQueueNoRefill, Context{}, refill, "pod c was created after")
	// With completions the rule is not this one.
	counted := newBuilder().pod("a", running).pod("a", succeeded)
	counted.status(func(s *batchv1.JobStatus) { s.Succeeded = 1 })
	counted.pod("c", nil)
	expectOK(t, WorkQueueNoRefill, Context{}, counted)
}
