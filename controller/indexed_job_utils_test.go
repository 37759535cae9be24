package controller

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func podOfIndex(f *fixture, j *batchv1.Job, ix string) *corev1.Pod {
	for _, p := range f.pods(j) {
		if p.Annotations[batchv1.JobCompletionIndexAnnotation] == ix && podActive(p) {
			return p
		}
	}
	f.t.Fatalf("no active pod of index %s", ix)
	return nil
}

func TestBackoffLimitPerIndex(t *testing.T) {
	f := newFixture(t)
	j := newJob("perindex", 2, func(j *batchv1.Job) {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		j.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
		j.Spec.BackoffLimit = ptr.To[int32](1<<31 - 1)
	})
	f.putJob(j)
	j = f.sync(j)
	if c := podOfIndex(f, j, "0").Annotations[batchv1.JobIndexFailureCountAnnotation]; c != "0" {
		t.Fatalf("first pod's failure count %q, want 0", c)
	}
	failWith(podOfIndex(f, j, "0"), 1, f)
	j = f.sync(j)
	for _, p := range f.pods(j) {
		if p.Status.Phase == corev1.PodFailed && !hasTrackingFinalizer(p) {
			t.Fatal("the failed pod lost its finalizer before its replacement exists")
		}
	}
	if n := len(f.pods(j)); n != 2 {
		t.Fatalf("%d pods inside the per-index backoff, want no replacement yet", n)
	}
	f.clock.Step(DefaultPodFailureBackoff)
	j = f.sync(j)
	retry := podOfIndex(f, j, "0")
	if c := retry.Annotations[batchv1.JobIndexFailureCountAnnotation]; c != "1" {
		t.Fatalf("retry's failure count %q, want 1", c)
	}
	failWith(retry, 1, f)
	p1 := podOfIndex(f, j, "1")
	finish(p1, corev1.PodSucceeded, f.now)
	f.setPod(p1)
	j = f.sync(j)
	if ptr.Deref(j.Status.FailedIndexes, "") != "0" || j.Status.CompletedIndexes != "1" {
		t.Fatalf("failedIndexes %q completedIndexes %q", ptr.Deref(j.Status.FailedIndexes, "<nil>"), j.Status.CompletedIndexes)
	}
	if !strings.HasPrefix(conds(j), "FailureTarget(FailedIndexes)") {
		t.Fatalf("conditions %s", conds(j))
	}
}
