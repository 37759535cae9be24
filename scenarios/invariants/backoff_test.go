package invariants

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// failedAt marks the pod Failed with its container finished at the builder's
// clock (second resolution, as the API writes it).
func failedAt(b *builder) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: metav1.NewTime(b.now.Truncate(time.Second))}}}}
	}
}

// failThenReplace: pod a fails, b replaces it after gap1 and fails, c
// replaces b after gap2.
func failThenReplace(gap1, gap2 time.Duration, mutate ...func(*batchv1.Job)) *builder {
	b := newBuilder(mutate...)
	b.pod("a", running)
	b.wait(time.Second)
	b.pod("a", failedAt(b))
	b.wait(gap1)
	b.pod("b", running)
	b.wait(time.Second)
	b.pod("b", failedAt(b))
	b.wait(gap2)
	b.pod("c", nil)
	return b
}

func TestBackoffRespected(t *testing.T) {
	// 10s, then 20s: the backoff doubles.
	expectOK(t, BackoffRespected, Context{}, failThenReplace(10*time.Second, 20*time.Second))
	// Replaced at once: no backoff at all.
	expectViolation(t, BackoffRespected, Context{}, failThenReplace(2*time.Second, 20*time.Second), "pod b created")
	// A backoff that never grows: 10s after the second failure.
	expectViolation(t, BackoffRespected, Context{}, failThenReplace(10*time.Second, 10*time.Second), "20s after 2 failures since the last success")
	// The controller's record is gone after a restart: no bound after it.
	restarted := failThenReplace(10*time.Second, 10*time.Second)
	expectOK(t, BackoffRespected, Context{Restarts: []time.Time{restarted.now.Add(-5 * time.Second)}}, restarted)
	// A success resets the record: a pod right after it is no replacement to bound.
	success := newBuilder(func(j *batchv1.Job) { j.Spec.Completions = ptr.To[int32](3) })
	success.pod("a", running)
	success.pod("a", failedAt(success))
	success.wait(10 * time.Second)
	success.pod("b", running)
	success.pod("b", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })
	success.pod("c", nil)
	expectOK(t, BackoffRespected, Context{}, success)
	// Parallelism 2: the first failure frees a slot; the bound is 10s from it,
	// not 20s from the second failure the controller may not have seen yet.
	two := newBuilder(func(j *batchv1.Job) { j.Spec.Parallelism, j.Spec.Completions = ptr.To[int32](2), ptr.To[int32](2) })
	two.pod("a", running).pod("b", running)
	two.pod("a", failedAt(two))
	two.wait(2 * time.Second)
	two.pod("b", failedAt(two))
	two.wait(9 * time.Second)
	two.pod("c", nil)
	expectOK(t, BackoffRespected, Context{}, two)
	// ...but the second replacement needs both failures seen: 20s from b's.
	two.pod("d", nil)
	expectViolation(t, BackoffRespected, Context{}, two, "pod d created")
	// The earliest finish time counts: a pod never Ready has Ready=False since
	// its start, which upstream reads as its finish time.
	neverReady := newBuilder()
	neverReady.pod("a", func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(neverReady.now.Truncate(time.Second))}}
	})
	neverReady.wait(8 * time.Second)
	neverReady.pod("a", failed)
	neverReady.wait(3 * time.Second)
	neverReady.pod("b", nil)
	expectOK(t, BackoffRespected, Context{}, neverReady)
	// backoffLimitPerIndex keeps a record per index: not bounded here, but by
	// index-backoff-respected (TestIndexBackoffRespected).
	expectOK(t, BackoffRespected, Context{}, failThenReplace(2*time.Second, 2*time.Second, func(j *batchv1.Job) { j.Spec.BackoffLimitPerIndex = ptr.To[int32](3) }))
}

func TestBackoffRespectedIndexed(t *testing.T) {
	indexed := func(j *batchv1.Job) {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		j.Spec.Parallelism, j.Spec.Completions = ptr.To[int32](2), ptr.To[int32](2)
	}
	b := newBuilder(indexed)
	b.pod("a0", withIndex("0")).pod("a1", withIndex("1"))
	b.pod("a0", failedAt(b))
	b.wait(10 * time.Second)
	b.pod("b0", withIndex("0"))
	b.pod("a1", failedAt(b))
	b.wait(15 * time.Second)
	// Index 1's replacement after two failures in all: 20s from a1's failure.
	b.pod("b1", withIndex("1"))
	expectViolation(t, BackoffRespected, Context{}, b, "pod b1 created")
}

// A pod let go uncounted — its finalizer released while it ran, before its
// deletion (an orphan of a duplicate index, adopted, then removed by the
// controller: explore-2-36) — is no failure: the next replacement's
// backoff counts only the real one.
func TestBackoffRespectedNotAfterAReleasedPod(t *testing.T) {
	indexed := func(j *batchv1.Job) {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		j.Spec.Parallelism, j.Spec.Completions = ptr.To[int32](1), ptr.To[int32](1)
	}
	run := func(release bool) *builder {
		b := newBuilder(indexed, func(j *batchv1.Job) { j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed) })
		b.pod("a", withIndex("0")).pod("a", running)
		b.wait(time.Second)
		// Made by hand with index 0, an orphan, then adopted (owner and
		// finalizer added).
		var owners []metav1.OwnerReference
		b.pod("x", func(p *corev1.Pod) {
			withIndex("0")(p)
			owners, p.OwnerReferences, p.Finalizers = p.OwnerReferences, nil, nil
		}).pod("x", running)
		b.pod("x", func(p *corev1.Pod) { p.OwnerReferences, p.Finalizers = owners, []string{fin} })
		if release {
			b.pod("x", unfinalized)
		}
		b.pod("x", deleting)
		b.wait(time.Second)
		b.pod("x", failedAt(b)).podGone("x")
		b.wait(8 * time.Second)
		b.pod("a", failedAt(b))
		b.wait(11 * time.Second)
		b.pod("b", withIndex("0"))
		return b
	}
	ctx := Context{Finalizer: fin}
	expectOK(t, BackoffRespected, ctx, run(true))
	// Deleted with its finalizer, it is a failure: two in all, 20s.
	expectViolation(t, BackoffRespected, ctx, run(false), "pod b created")
}
