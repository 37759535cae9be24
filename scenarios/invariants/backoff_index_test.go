package invariants

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// Seen in make run's chaos suite (seeded-soak, 2026-11-28): a pod held
// unready by a readiness gate since its start was killed, and failed 3s
// later with its Ready condition rewritten. Counting it failed at its
// deletion (TerminatingOrFailed), upstream's getFinishedTime reads the
// Ready=False transition of its start: the index's retry 10s after that,
// right as the pod failed, is within the backoff's weakest bound.
func TestIndexBackoffFromTheEarliestView(t *testing.T) {
	b := newBuilder(func(j *batchv1.Job) {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		j.Spec.Parallelism, j.Spec.Completions = ptr.To[int32](1), ptr.To[int32](1)
		j.Spec.BackoffLimitPerIndex = ptr.To[int32](3)
	})
	start := *at(b)
	b.pod("a0", withIndex("0")).pod("a0", func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: start}}
	})
	b.wait(7 * time.Second)
	b.pod("a0", func(p *corev1.Pod) {
		p.DeletionTimestamp, p.DeletionGracePeriodSeconds = ptr.To(metav1.NewTime(b.now.Add(30*time.Second))), ptr.To[int64](30)
	})
	b.wait(3 * time.Second)
	b.pod("a0", func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		p.Status.Conditions[0].LastTransitionTime = *at(b)
	})
	b.pod("b0", withIndex("0"))
	expectOK(t, IndexBackoffRespected, Context{}, b)
}

// A pod the controller let go uncounted — its tracking finalizer removed
// while it ran, as a suspension does before deleting it — is no failure of
// its index: its successor after the resume waits for no backoff (explore
// seed 3, cases 84, 98, 101: v1.37.1's built-in and the reference alike).
// A pod whose finalizer goes after it failed (release-failed-at-once) is.
func TestIndexBackoffNotAfterAReleasedPod(t *testing.T) {
	const f = "example.com/tracking"
	run := func(releasedWhileRunning bool) *builder {
		b := newBuilder(func(j *batchv1.Job) {
			j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
			j.Spec.Parallelism, j.Spec.Completions = ptr.To[int32](1), ptr.To[int32](1)
			j.Spec.BackoffLimitPerIndex = ptr.To[int32](3)
		})
		b.pod("a0", withIndex("0")).pod("a0", func(p *corev1.Pod) { p.Finalizers = []string{f}; p.Status.Phase = corev1.PodRunning })
		unfinalize := func(p *corev1.Pod) { p.Finalizers = nil }
		if releasedWhileRunning {
			b.pod("a0", unfinalize)
		}
		b.pod("a0", failedAt(b))
		if !releasedWhileRunning {
			b.pod("a0", unfinalize)
		}
		b.wait(time.Second)
		b.pod("b0", withIndex("0")).pod("b0", func(p *corev1.Pod) { p.Finalizers = []string{f} })
		return b
	}
	expectOK(t, IndexBackoffRespected, Context{Finalizer: f}, run(true))
	expectViolation(t, IndexBackoffRespected, Context{Finalizer: f}, run(false), "pod b0 retries index 0")
}
