package controller

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestSuccessPolicy(t *testing.T) {
	f := newFixture(t)
	j := newJob("sp", 3, func(j *batchv1.Job) {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: ptr.To("0")}}}
	})
	f.putJob(j)
	j = f.sync(j)
	p := podOfIndex(f, j, "0")
	finish(p, corev1.PodSucceeded, f.now)
	f.setPod(p)
	j = f.sync(j)
	sc := condition(j, batchv1.JobSuccessCriteriaMet)
	if sc == nil || sc.Reason != batchv1.JobReasonSuccessPolicy || sc.Message != "Matched rules at index 0" {
		t.Fatalf("conditions %s (%+v)", conds(j), sc)
	}
	j = f.sync(j) // the other pods were deleted; now nothing terminates
	if c := condition(j, batchv1.JobComplete); c == nil || c.Reason != batchv1.JobReasonSuccessPolicy {
		t.Fatalf("Complete must carry the SuccessPolicy reason: %s", conds(j))
	}
	if j.Status.CompletedIndexes != "0" || j.Status.Active != 0 {
		t.Fatalf("completedIndexes %q active %d", j.Status.CompletedIndexes, j.Status.Active)
	}
}
