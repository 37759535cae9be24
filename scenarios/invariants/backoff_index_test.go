package invariants

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestIndexBackoffRespected(t *testing.T) {
	perIndex := func(j *batchv1.Job) {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		j.Spec.Parallelism, j.Spec.Completions = ptr.To[int32](2), ptr.To[int32](2)
		j.Spec.BackoffLimitPerIndex = ptr.To[int32](3)
	}
	counted := func(n string) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Annotations[batchv1.JobIndexFailureCountAnnotation] = n }
	}
	// Index 0 fails twice: its retries wait 10s, then 20s; index 1's pod is
	// no retry and waits for nothing.
	run := func(first, second time.Duration) *builder {
		b := newBuilder(perIndex)
		b.pod("a0", withIndex("0")).pod("a0", counted("0")).pod("a1", withIndex("1"))
		b.pod("a0", failedAt(b))
		b.wait(first)
		b.pod("b0", withIndex("0")).pod("b0", counted("1"))
		b.wait(time.Second)
		b.pod("b0", failedAt(b))
		b.wait(second)
		b.pod("c0", withIndex("0"))
		return b
	}
	expectOK(t, IndexBackoffRespected, Context{}, run(10*time.Second, 20*time.Second))
	// Retried at once: no per-index backoff (what backoff-respected, off for
	// these Jobs, let through).
	expectViolation(t, IndexBackoffRespected, Context{}, run(2*time.Second, 20*time.Second), "pod b0 retries index 0")
	// A backoff that never doubles: 10s after the index's second failure.
	expectViolation(t, IndexBackoffRespected, Context{}, run(10*time.Second, 10*time.Second), "20s after the index's failure 2")
	// The record is the pods' annotations: a restart changes nothing.
	restarted := run(10*time.Second, 10*time.Second)
	expectViolation(t, IndexBackoffRespected, Context{Restarts: []time.Time{restarted.now.Add(-5 * time.Second)}}, restarted, "pod c0 retries index 0")
	// Without backoffLimitPerIndex the Job's one record applies (backoff-respected).
	plain := newBuilder(func(j *batchv1.Job) {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		j.Spec.Parallelism, j.Spec.Completions = ptr.To[int32](1), ptr.To[int32](1)
	})
	plain.pod("a0", withIndex("0")).pod("a0", failedAt(plain)).pod("b0", withIndex("0"))
	expectOK(t, IndexBackoffRespected, Context{}, plain)
}
