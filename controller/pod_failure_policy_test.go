package controller

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func failWith(p *corev1.Pod, code int32, f *fixture) {
	finish(p, corev1.PodFailed, f.now)
	p.Status.ContainerStatuses[0].State.Terminated.ExitCode = code
	f.setPod(p)
}

// failJobOn is a Job of n pods, replaced once failed, with one FailJob rule
// on the exit codes op codes.
func failJobOn(name string, n int32, op batchv1.PodFailurePolicyOnExitCodesOperator, codes ...int32) *batchv1.Job {
	return newJob(name, n, func(j *batchv1.Job) {
		j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action:      batchv1.PodFailurePolicyActionFailJob,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: op, Values: codes},
		}}}
	})
}

func TestPodFailurePolicyFailJob(t *testing.T) {
	f := newFixture(t)
	j := failJobOn("pfp", 2, batchv1.PodFailurePolicyOnExitCodesOpIn, 42)
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

// A pod a suspension deleted, its finalizer removed first, that ends Failed
// with the SIGTERM's exit code before it is gone, fails no Job by a FailJob
// rule: it was let go uncounted (upstream fails the Job:
// suspend-killed-pod-fails-job). Still tracked, the same pod fails it.
func TestPodFailurePolicyIgnoresPodsLetGo(t *testing.T) {
	for _, tracked := range []bool{false, true} {
		f := newFixture(t)
		j := failJobOn("pfp", 1, batchv1.PodFailurePolicyOnExitCodesOpNotIn, 0)
		f.putJob(j)
		j = f.sync(j)
		pods := f.pods(j)
		if len(pods) != 1 {
			t.Fatalf("%d pods", len(pods))
		}
		p := pods[0]
		if !tracked {
			p.Finalizers = nil
		}
		p.DeletionTimestamp = &metav1.Time{Time: f.now}
		failWith(p, 143, f)
		j = f.sync(j)
		if failing := condition(j, batchv1.JobFailureTarget) != nil; failing != tracked {
			t.Errorf("tracked %v: conditions %s", tracked, conds(j))
		}
	}
}
