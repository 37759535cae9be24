package controller

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func failWith(p *corev1.Pod, code int32, f *fixture) {
	finish(p, corev1.PodFailed, f.now)
	p.Status.ContainerStatuses[0].State.Terminated.ExitCode = code
	f.setPod(p)
}

func podOfIndex(f *fixture, j *batchv1.Job, ix string) *corev1.Pod {
	for _, p := range f.pods(j) {
		if p.Annotations[batchv1.JobCompletionIndexAnnotation] == ix && podActive(p) {
			return p
		}
	}
	f.t.Fatalf("no active pod of index %s", ix)
	return nil
}

func TestPodFailurePolicyFailJob(t *testing.T) {
	f := newFixture(t)
	j := newJob("pfp", 2, func(j *batchv1.Job) {
		j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action:      batchv1.PodFailurePolicyActionFailJob,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
		}}}
	})
	f.putJob(j)
	j = f.sync(j)
	pods := f.pods(j)
	failWith(pods[0], 42, f)
	j = f.sync(j)
	ft := condition(j, batchv1.JobFailureTarget)
	if ft == nil || ft.Reason != batchv1.JobReasonPodFailurePolicy {
		t.Fatalf("conditions %s, want FailureTarget(PodFailurePolicy)", conds(j))
	}
	want := "Container main for pod ns/" + pods[0].Name + " failed with exit code 42 matching FailJob rule at index 0"
	if ft.Message != want {
		t.Fatalf("message %q, want %q", ft.Message, want)
	}
	if strings.Contains(conds(j), "Failed(") {
		t.Fatalf("Failed written while the other pod was being deleted: %s", conds(j))
	}
	// The fake clientset removed the other pod at once: the next sync finishes.
	if j = f.sync(j); !strings.Contains(conds(j), "Failed(PodFailurePolicy)") {
		t.Fatalf("conditions %s", conds(j))
	}
}

func TestPodFailurePolicyIgnoreDisruption(t *testing.T) {
	f := newFixture(t)
	j := newJob("ignore", 1, func(j *batchv1.Job) {
		j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
		j.Spec.BackoffLimit = ptr.To[int32](0)
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action:          batchv1.PodFailurePolicyActionIgnore,
			OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}},
		}}}
	})
	f.putJob(j)
	j = f.sync(j)
	p := f.pods(j)[0]
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI"})
	failWith(p, 143, f)
	j = f.sync(j)
	if j.Status.Failed != 0 || conds(j) != "" {
		t.Fatalf("an ignored disruption counted: failed=%d conditions %s", j.Status.Failed, conds(j))
	}
	if hasTrackingFinalizer(f.pods(j)[0]) {
		t.Fatal("the ignored pod keeps its finalizer")
	}
	f.clock.Step(DefaultPodFailureBackoff)
	if j = f.sync(j); j.Status.Active != 1 {
		t.Fatalf("no replacement for the ignored pod: active=%d", j.Status.Active)
	}
}

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
